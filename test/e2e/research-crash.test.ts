import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keysCommand } from '../../cli/commands/keys.ts';
import { replayCommand } from '../../cli/commands/replay.ts';
import { column, columns, sql, table } from '../../infra/store/sql-literal.ts';
import { backtestRequests, backtestRuns } from '../../projections/tables/research.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { openStore } from '../../projections/open-store.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { TERMINAL_RUN_STATUSES, type BacktestRunEvent } from '../../schemas/records.ts';
import { WORLD } from '../helpers/api-world.ts';
import { runCommand } from '../helpers/cli.ts';
import { freePorts } from '../../infra/peers/clickhouse-server.ts';
import { signalGroup } from '../../infra/peers/peer-process.ts';
import { projectToEnd, runQuantToEnd } from '../helpers/pipeline.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * `tqa start` (every role, as `npm start` runs it) killed with SIGKILL while a backtest is
 * running and four others are queued, then started again: every run reaches `done`, the one cut
 * off is run again (attempt 2) and gives the same result as the same request run unkilled.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let config: Config;
let log: FileEventLog;
let codec: Codec;
let env: NodeJS.ProcessEnv;
let base: string;
const children = new Set<ChildProcess>();

function startService(roles: string[] = []): ChildProcess {
  const child = spawn(process.execPath, ['bin/tqa.js', 'start', ...roles], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'ignore', 'ignore'] });
  children.add(child);
  return child;
}

async function kill(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  signalGroup(child, signal);
  await exited;
  children.delete(child);
}

async function api(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any } | null> {
  try {
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  } catch {
    return null; // not listening yet
  }
}

async function runEvents(): Promise<BacktestRunEvent[]> {
  return Promise.all((await readTopic(log, TOPICS.backtestRuns.name)).map((r) => codec.decode(r.topic, r.value!) as Promise<BacktestRunEvent>));
}

/** Every run's request and latest state as the store holds them. */
async function runRows(): Promise<unknown[]> {
  const store = await openStore(config, silentLogger);
  try {
    const requests = await store.query(sql`SELECT ${columns(backtestRequests)} FROM ${table(backtestRequests)} ORDER BY ${column(backtestRequests, 'run_id')}`);
    const runs = await store.query(sql`SELECT ${columns(backtestRuns)} FROM ${table(backtestRuns)} ORDER BY ${column(backtestRuns, 'run_id')}`);
    return requests.map((r, i) => ({ request: r, run: runs[i] }));
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-research-crash-'));
  config = loadConfig({ TQA_DATA_DIR: dir });
  ({ log, codec } = await openEmbedded(dir));
  await seedHistory({ log, codec, dataDir: dir, seed: WORLD.seed, days: WORLD.days, endMs: WORLD.endMs, tokens: WORLD.tokens, authors: WORLD.authors });
  await runQuantToEnd(dir, log, codec);
  // The store holds the whole history before the service starts, so every run reads the same.
  const store = await openStore(config, silentLogger);
  await projectToEnd(config, log, codec, store);
  await store.close();
  const [port, streamPort] = await freePorts(2);
  base = `http://127.0.0.1:${port}`;
  env = { ...process.env, TQA_DATA_DIR: dir, PORT: String(port), STREAM_PORT: String(streamPort), TQA_LOG: 'embedded', TQA_STORE: 'duckdb', TQA_SIM: 'off', LOG_LEVEL: 'warn' };
}, 600_000);

afterAll(async () => {
  for (const child of children) await kill(child, 'SIGKILL');
  await log?.close();
  await rm(dir, { recursive: true, force: true });
});

const SPECS = [
  { rules: [{ field: 'momentum', op: '>=', value: 40 }], horizon: '24h' },
  { rules: [{ field: 'liquidity_usd', op: '>=', value: 10_000 }], horizon: '6h', cooldown: '24h' },
  { rules: [{ field: 'crowding', op: '<', value: 60 }], horizon: '1h', dead_token_policy: 'total_loss' },
  { rules: [{ field: 'momentum', op: '>', value: 20 }], horizon: '3d', dead_token_policy: 'exclude' },
  { rules: [{ field: 'liquidity_usd', op: '>', value: 0 }], horizon: '15m', universe: { chains: ['solana', 'base'] } },
];

describe('the service killed with backtests running and queued', () => {
  it('completes every run after a restart, with the result an unkilled run gives', async () => {
    // Queued with no research role running, so all five wait when the runner starts on them one by one.
    const queueing = startService(['--roles', 'api,projections']);
    const { key } = JSON.parse(await runCommand(keysCommand, config, ['create', '--plan', 'team', '--name', 'crash', '--json'])) as { key: string };
    const ids: string[] = [];
    for (const spec of SPECS) {
      const res = await waitFor(async () => (await api('POST', '/v1/quant/backtests', key, spec)) ?? undefined, 'the API to take a backtest', 60_000);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      ids.push(res.body.id);
    }
    await kill(queueing, 'SIGTERM');
    expect(await runEvents()).toEqual([]);

    // Every role, killed as soon as the first run is recorded running: four more wait behind it.
    const first = startService();
    // Polled without backoff: the moment matters, and a run takes far longer than a poll.
    for (const deadline = Date.now() + 60_000; (await log.read(TOPICS.backtestRuns.name, 0, 0, 1)).length === 0; await delay(2)) {
      if (Date.now() > deadline) throw new Error('no run started within 60 s');
    }
    await kill(first, 'SIGKILL');

    // What the log says was in hand when the process died: at least one run started and unfinished.
    const before = await runEvents();
    const ended = new Set(before.filter((e) => TERMINAL_RUN_STATUSES.includes(e.status)).map((e) => e.runId));
    const cutOff = [...new Set(before.filter((e) => e.status === 'running' && !ended.has(e.runId)).map((e) => e.runId))];
    expect(cutOff.length, 'a run was running when the service was killed').toBeGreaterThan(0);

    startService();
    const results = new Map<string, any>();
    for (const id of ids) {
      const run = await waitFor(async () => {
        const res = await api('GET', `/v1/quant/backtests/${id}`, key);
        return res?.status === 200 && ['done', 'failed', 'canceled'].includes(res.body.status) && res.body;
      }, `${id} to end after the restart`, 120_000);
      expect(run.status, run.reason).toBe('done');
      results.set(id, run);
    }
    for (const id of cutOff) expect(results.get(id).attempt).toBe(2);

    // The same requests again, run without interruption, give the same results.
    for (const [i, spec] of SPECS.entries()) {
      const res = await api('POST', '/v1/quant/backtests', key, spec);
      expect(res!.status).toBe(202);
      const again = await waitFor(async () => {
        const r = await api('GET', `/v1/quant/backtests/${res!.body.id}`, key);
        return r?.status === 200 && r.body.status === 'done' && r.body;
      }, 'the unkilled rerun', 120_000);
      expect(again.result, `result of request ${i}`).toEqual(results.get(ids[i]).result);
      expect(again.attempt).toBe(1);
    }
  }, 600_000);

  it('rebuilds every run and its result from the log with tqa replay', async () => {
    const [service] = children;
    await kill(service, 'SIGTERM');
    const served = await runRows();
    expect(served.length).toBe(SPECS.length * 2);
    await runCommand(replayCommand, config, []);
    expect(await runRows()).toEqual(served);
  }, 300_000);
});
