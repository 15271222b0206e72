import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../api/app.ts';
import { SCOPE_NAMES } from '../../api/scopes.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { column, sql, table } from '../../infra/store/sql-literal.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { analogsStage } from '../../processors/analogs/analogs.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { scoresStage } from '../../processors/scores/scores.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { openStore } from '../../projections/open-store.ts';
import { settledSnapshotTime } from '../../projections/read-models/as-of.ts';
import { startLiveProjections, type ProjectionSet } from '../../projections/runtime/runner.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { signals } from '../../projections/tables/quant.ts';
import { authorMetrics } from '../../projections/tables/social.ts';
import { runCommand } from '../helpers/cli.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * `as_of` while the engine writes: the real quant engine (with the analogs stage behind it,
 * which writes the signals) works through a seeded history and the live projections store
 * what they produce, while the API pages the token list and
 * answers reads. A full pagination visits each token exactly once though snapshots are stored
 * between its pages; and once the run has moved on, every read asked again with the `as_of`
 * it answered gives the same answer.
 */

const WORLD = { seed: 99, days: 3, endMs: Date.UTC(2026, 4, 1), tokens: 40, authors: 200 } as const;
const PAGE = 4;

let dir: string;
let config: Config;
let log: FileEventLog;
let store: AnalyticalStore<ProjectionTables>;
let projections: ProjectionSet;
let engine: ProcessorRuntime<unknown>;
let scores: ProcessorRuntime<unknown>;
let analogs: ProcessorRuntime<unknown>;
let api: Api;
let server: Server;
let base: string;
let key: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-asof-'));
  config = loadConfig({ TQA_DATA_DIR: dir });
  const embedded = await openEmbedded(dir);
  log = embedded.log;
  const { codec } = embedded;
  await seedHistory({ log, codec, dataDir: dir, seed: WORLD.seed, days: WORLD.days, endMs: WORLD.endMs, tokens: WORLD.tokens, authors: WORLD.authors });
  store = await openStore(config, silentLogger);
  projections = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store, logger: silentLogger });
  const runtime = (processor: Processor<unknown>) =>
    new ProcessorRuntime({
      processor,
      log,
      codec,
      checkpoints: new FileCheckpoints(join(dir, 'state')),
      logger: silentLogger,
      // Small batches: the engine's outputs reach the log, and the store, a little at a time.
      maxBatchRecords: 500,
    });
  engine = runtime(quantEngine);
  scores = runtime(scoresStage);
  analogs = runtime(analogsStage);
  void engine.start();
  void scores.start();
  void analogs.start();
  const clockStart = Date.now();
  api = createApi({ log, codec, store, logger: silentLogger, startedAt: WORLD.endMs, now: () => WORLD.endMs + (Date.now() - clockStart) });
  server = api.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  key = (JSON.parse(await runCommand(keysCommand, config, ['create', '--plan', 'team', '--scopes', SCOPE_NAMES.join(','), '--name', 'as-of', '--json'])) as { key: string }).key;
}, 600_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await api?.close();
  await engine?.stop();
  await scores?.stop();
  await analogs?.stop();
  await projections?.stop();
  await store?.close();
  await log?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

async function post(body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/v1/quant/scan`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const withAsOf = (path: string, asOf: string) => `${path}${path.includes('?') ? '&' : '?'}as_of=${encodeURIComponent(asOf)}`;

/** Waits until the store holds every snapshot of a newer time than it did: the engine wrote meanwhile. */
async function nextSettledTime(): Promise<number> {
  const before = await settledSnapshotTime(store);
  return waitFor(async () => {
    const now = await settledSnapshotTime(store);
    return now !== null && (before === null || now > before) ? now : undefined;
  }, 'the projections to store a newer snapshot step', 120_000);
}

/** A token snapshot without what is computed per request or over the analog index of the moment. */
function withoutRequestTime(body: any): any {
  const { freshness, analogs: _analogs, ...rest } = body;
  const { age_ms: _age, stale: _stale, stale_reasons: _reasons, ...stored } = freshness;
  return { ...rest, freshness: stored };
}

describe('as_of while the engine writes', () => {
  /** What the live service answered during the run, read by read. */
  const recorded: { path: string; body: any; compare: (body: any) => any }[] = [];

  it('pages the token list to the end while new snapshots are stored between pages, each token exactly once', async () => {
    await waitFor(async () => {
      const first = await get('/v1/quant/tokens?limit=100');
      return first.body.data?.length >= 5 * PAGE;
    }, 'the first snapshots of most tokens', 240_000);

    const first = await get(`/v1/quant/tokens?limit=${PAGE}`);
    expect(first.status).toBe(200);
    const asOf: string = first.body.as_of;
    const seen: string[] = first.body.data.map((r: any) => r.token_id);
    let cursor: string | null = first.body.next_cursor;
    let writes = 0;
    while (cursor !== null) {
      // The engine and the projections move on between every two pages.
      await nextSettledTime();
      writes++;
      const page = await get(`/v1/quant/tokens?limit=${PAGE}&cursor=${encodeURIComponent(cursor)}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body.as_of).toBe(asOf);
      seen.push(...page.body.data.map((r: any) => r.token_id));
      cursor = page.body.next_cursor;
      await record();
    }
    expect(writes).toBeGreaterThan(3);
    expect(new Set(seen).size).toBe(seen.length);
    const whole = await get(withAsOf('/v1/quant/tokens?limit=100', asOf));
    expect(seen).toEqual(whole.body.data.map((r: any) => r.token_id));
    // The live list has moved on meanwhile: read live page by page, the sort key would have moved under the cursor.
    const live = await get('/v1/quant/tokens?limit=100');
    expect(Date.parse(live.body.as_of)).toBeGreaterThan(Date.parse(asOf));
  }, 600_000);

  /** Live answers of the moment, for the next case to ask again as of their time. */
  async function record(): Promise<void> {
    const token = (await get('/v1/quant/tokens?limit=1')).body.data[0].token_id as string;
    // Reads of one object, whose as_of is the time of that object's own data, and a listing read
    // as of the settled time of the history.
    const paths = [`/v1/quant/token/${token}`, '/v1/quant/tokens?limit=100&sort=crowding&dir=asc'];
    const [signal] = await store.query<{ id: string | null }>(sql`SELECT min(${column(signals, 'signal_id')}) AS id FROM ${table(signals)}`);
    if (signal?.id) paths.push(`/v1/quant/signals/${signal.id}`);
    const [author] = await store.query<{ handle: string | null }>(sql`SELECT min(${column(authorMetrics, 'handle')}) AS handle FROM ${table(authorMetrics)}`);
    if (author?.handle) paths.push(`/v1/quant/users/@${author.handle}`);
    for (const path of paths) {
      const res = await get(path);
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
      const compare = path.startsWith('/v1/quant/token/') ? withoutRequestTime : (body: any) => body;
      recorded.push({ path, body: res.body, compare });
    }
    const scan = await post({ preset: 'broad-momentum', limit: 200 });
    expect(scan.status).toBe(200);
    recorded.push({ path: 'scan', body: scan.body, compare: (b) => b });
  }

  it('answers every read recorded during the run the same, asked again as of its as_of once the run has moved on', async () => {
    expect(recorded.length).toBeGreaterThan(20);
    await waitFor(() => engine.caughtUp(), 'the quant engine to finish the history', 300_000);
    await engine.stop(); // its commit on stop is the progress the analogs stage waits for
    await waitFor(() => analogs.caughtUp(), 'the analogs stage to finish the signals', 300_000);
    await waitFor(() => projections.caughtUp(), 'the projections to store it', 300_000);
    for (const { path, body, compare } of recorded) {
      if (path === 'scan') {
        expect((await post({ preset: 'broad-momentum', limit: 200, as_of: body.as_of })).body, `scan as of ${body.as_of}`).toEqual(body);
        continue;
      }
      const again = await get(withAsOf(path, body.as_of));
      expect(again.status, `${path} as of ${body.as_of}`).toBe(200);
      expect(compare(again.body), `${path} as of ${body.as_of}`).toEqual(compare(body));
    }
  }, 600_000);
});
