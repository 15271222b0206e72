import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../cli/commands/replay.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { openStore } from '../../projections/open-store.ts';
import type { AnalyticalStore, Row } from '../../infra/store/port.ts';
import { column, columns, sql, table } from '../../infra/store/sql-literal.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { startLiveProjections, type ProjectionSet } from '../../projections/runtime/runner.ts';
import { PROJECTION_TABLES, type ProjectionTables } from '../../projections/tables.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { Mention, TokenMeta } from '../../schemas/records.ts';
import { startClickHouseServer, type ClickHouseServer } from '../../infra/peers/clickhouse-server.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

const T0 = 1_750_000_000_000;

/** Every projected table, each ordered by its natural key. */
async function dump(store: AnalyticalStore<ProjectionTables>): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = {};
  for (const def of Object.values(PROJECTION_TABLES)) {
    const order = def.key.map((k) => column(def, k)).reduce((a, b) => sql`${a}, ${b}`);
    out[def.name] = await store.query(sql`SELECT ${columns(def)} FROM ${table(def)} ORDER BY ${order}`);
  }
  return out;
}

async function replay(config: Config, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const text = { stdout: '', stderr: '' };
  const sink = (name: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        text[name] += chunk.toString('utf8');
        done();
      },
    });
  const code = await replayCommand.run(args, { config, logger: silentLogger, stdout: sink('stdout'), stderr: sink('stderr') });
  return { code, ...text };
}

describe('projections on ClickHouse: live and replayed stores agree', () => {
  let server: ClickHouseServer;
  let dir: string;
  let config: Config;
  let log: FileEventLog;
  let codec: Codec;
  let store: AnalyticalStore<ProjectionTables>;
  let live: ProjectionSet;
  const suffix = randomUUID().replaceAll('-', '').slice(0, 12);

  beforeAll(async () => {
    server = await startClickHouseServer();
    dir = await mkdtemp(join(tmpdir(), 'tqa-projections-ch-'));
    config = loadConfig({
      TQA_DATA_DIR: dir,
      TQA_LOG_FSYNC: 'never',
      TQA_STORE: 'clickhouse',
      CLICKHOUSE_URL: server.url,
      CLICKHOUSE_DATABASE: `live_${suffix}`,
    });
    ({ log, codec } = await openEmbedded(dir));
    store = await openStore(config, silentLogger);
    live = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store, logger: silentLogger });
  });

  afterAll(async () => {
    await live?.stop();
    await store?.close();
    await log?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('replays the log into a fresh database with the same rows, and refuses a database that holds rows', async () => {
    const tokens: TokenMeta[] = [1, 2, 3].map((i) => ({
      tokenId: `tk_${i}`,
      ts: T0 + i,
      symbol: `SYM${i}`,
      name: `Token "${i}" it's`,
      chain: 'base',
      address: `Addr${String(i).repeat(36)}`,
      logoUrl: null,
      status: 'active',
      narrative: 'memes',
      sourceUrl: i === 1 ? 'https://example.com/t' : null,
    }));
    const mentions: Mention[] = Array.from({ length: 40 }, (_, i) => ({
      mentionId: `mn_${(i % 30).toString(16).padStart(6, '0')}`,
      postId: `po_${i % 30}`,
      authorId: `au_${i % 4}`,
      authorHandle: `h${i % 4}`,
      tokenId: tokens[i % 3].tokenId,
      ref: `$SYM${(i % 3) + 1}`,
      refKind: 'symbol',
      postKind: 'post',
      engagement: i % 30,
      ts: T0 + 1_000 * (i % 30),
    }));
    const produce = async (topic: string, values: (TokenMeta | Mention)[]) => {
      const records = values.map(async (v) => ({ key: v.tokenId, value: await codec.encode(topic, v), timestamp: v.ts }));
      await log.append(topic, await Promise.all(records));
    };
    await produce(TOPICS.tokens.name, tokens);
    // Mentions 30..39 repeat 0..9: re-delivered records.
    await produce(TOPICS.mentions.name, mentions);
    await log.append(TOPICS.mentions.name, [{ key: 'tk_1', value: Buffer.from([0, 0, 0, 0, 99, 1, 2]), timestamp: T0 }]);

    await waitFor(() => live.caughtUp(), 'the live projections to catch up', 60_000);
    const expected = await waitFor(async () => {
      const rows = await dump(store);
      return rows.dead_letters.length === 1 && rows;
    }, 'the dead letter to be projected');
    expect(expected.tokens).toHaveLength(3);
    expect(expected.mentions).toHaveLength(30);
    expect(expected.dead_letters[0]).toMatchObject({
      stage: 'projection.mentions',
      reason: expect.stringMatching(/^decoding failed: unknown schema id 99/),
    });

    const database = `replayed_${suffix}`;
    const result = await replay(config, ['--from-beginning', '--database', database]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`rebuilt into ClickHouse database ${database}`);
    const replayed = await openStore(config, silentLogger, { clickhouseDatabase: database });
    try {
      expect(await dump(replayed)).toEqual(expected);
    } finally {
      await replayed.close();
    }

    const again = await replay(config, ['--database', database]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not empty');
  });
});
