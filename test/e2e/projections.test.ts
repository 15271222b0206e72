import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../projections/usage-error.ts';
import { replayCommand } from '../../cli/commands/replay.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { StoreError } from '../../infra/store/errors.ts';
import { openStore } from '../../projections/open-store.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { column, columns, sql, table } from '../../infra/store/sql-literal.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { latestSnapshotRow, latestSnapshotsProjection } from '../../projections/latest-snapshots.ts';
import { mentionsProjection } from '../../projections/mentions.ts';
import { replayProjections } from '../../projections/runtime/replay.ts';
import { startLiveProjections, startProjections, type ProjectionSet } from '../../projections/runtime/runner.ts';
import { mentions, PROJECTION_TABLES, type MentionRow, type ProjectionTables } from '../../projections/tables.ts';
import { tokens } from '../../presenters/tokens-table.ts';
import { latestSnapshots } from '../../projections/tables/quant.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { DeadLetter, Mention, TokenMeta } from '../../schemas/records.ts';
import { SCORE_NAMES } from '../../schemas/records/primitives.ts';
import { blankSnapshot } from '../helpers/quant-snapshot.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';
import { sink } from '../helpers/sink.ts';
import { dumpStore as dump, everyRow } from '../helpers/store-dump.ts';

const T0 = 1_750_000_000_000;

function token(i: number, overrides: Partial<TokenMeta> = {}): TokenMeta {
  return {
    tokenId: `tk_${i}`,
    ts: T0 + i,
    symbol: `SYM${i}`,
    name: `Token ${i}`,
    chain: 'solana',
    address: `So1111111111111111111111111111111111111${i}`.slice(0, 44),
    logoUrl: i % 2 === 0 ? null : `https://example.com/${i}.png`,
    status: 'active',
    narrative: 'ai-agents',
    sourceUrl: null,
    ...overrides,
  };
}

function mention(i: number): Mention {
  return {
    mentionId: `mn_${i.toString(16).padStart(8, '0')}`,
    postId: `po_${i}`,
    authorId: `au_${i % 7}`,
    authorHandle: `author_${i % 7}`,
    tokenId: `tk_${i % 3}`,
    ref: `$SYM${i % 3}`,
    refKind: 'symbol',
    postKind: i % 4 === 0 ? 'reply' : 'post',
    engagement: i * 3,
    ts: T0 + 60_000 * i,
  };
}

async function produce(log: FileEventLog, codec: Codec, topic: string, values: { key: string; value: object; ts: number }[]) {
  const records = await Promise.all(
    values.map(async (v) => ({ key: v.key, value: await codec.encode(topic, v.value), timestamp: v.ts })),
  );
  await log.append(topic, records);
}

const produceTokens = (log: FileEventLog, codec: Codec, values: TokenMeta[]) =>
  produce(log, codec, TOPICS.tokens.name, values.map((t) => ({ key: t.tokenId, value: t, ts: t.ts })));
const produceMentions = (log: FileEventLog, codec: Codec, values: Mention[]) =>
  produce(log, codec, TOPICS.mentions.name, values.map((m) => ({ key: m.tokenId, value: m, ts: m.ts })));

/** The store, but its first `failures` upserts fail for good; `onStored` sees the rest. */
function failingStore(
  inner: AnalyticalStore<ProjectionTables>,
  failures: number,
  onStored: (table: string, rows: readonly object[]) => void = () => undefined,
): { store: AnalyticalStore<ProjectionTables>; failed: number } {
  const state = {
    failed: 0,
    store: {
      tables: inner.tables,
      migrate: () => inner.migrate(),
      appliedMigrations: () => inner.appliedMigrations(),
      query: (statement, options) => inner.query(statement, options),
      ping: () => inner.ping(),
      close: async () => undefined,
      upsert: async (name, rows) => {
        if (state.failed < failures) {
          state.failed++;
          throw new StoreError('STORE_QUERY_FAILED', 'disk full');
        }
        await inner.upsert(name, rows);
        onStored(name, rows);
      },
    } satisfies AnalyticalStore<ProjectionTables>,
  };
  return state;
}

async function replay(config: Config, args: string[]) {
  const stdout = sink();
  const stderr = sink();
  const code = await replayCommand.run(args, { config, logger: silentLogger, stdout: stdout.stream, stderr: stderr.stream });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('projections on the embedded log and DuckDB', () => {
  let dir: string;
  let config: Config;
  let log: FileEventLog;
  let codec: Codec;
  let store: AnalyticalStore<ProjectionTables>;
  let live: ProjectionSet;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-projections-'));
    config = loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'never' });
    ({ log, codec } = await openEmbedded(dir));
    store = await openStore(config, silentLogger);
    live = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store, logger: silentLogger });
  });

  afterAll(async () => {
    await live?.stop();
    await store?.close();
    await log?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const caughtUp = () => waitFor(() => live.caughtUp(), 'the live projections to catch up');

  it('writes tokens and mentions produced to the log into the store, field for field', async () => {
    await produceTokens(log, codec, [token(1), token(2)]);
    await produceMentions(log, codec, [mention(1), mention(2), mention(3)]);
    await caughtUp();

    expect(await store.query(everyRow(tokens))).toEqual([
      {
        token_id: 'tk_1',
        ts: T0 + 1,
        symbol: 'SYM1',
        name: 'Token 1',
        chain: 'solana',
        address: token(1).address,
        logo_url: 'https://example.com/1.png',
        status: 'active',
        narrative: 'ai-agents',
        source_url: null,
      },
      expect.objectContaining({ token_id: 'tk_2', logo_url: null }),
    ]);
    const rows = await store.query(everyRow(mentions));
    expect(rows).toHaveLength(3);
    expect(rows[0]).toEqual({
      mention_id: 'mn_00000001',
      post_id: 'po_1',
      author_id: 'au_1',
      author_handle: 'author_1',
      token_id: 'tk_1',
      ref: '$SYM1',
      ref_kind: 'symbol',
      post_kind: 'post',
      engagement: 3,
      ts: T0 + 60_000,
    });
  });

  it('keeps one row per key when records come again, and the newest version of a token', async () => {
    await produceMentions(log, codec, [mention(1), mention(2), mention(3)]);
    // A newer version of tk_1 and an older one of tk_2.
    await produceTokens(log, codec, [token(1, { status: 'delisted', ts: T0 + 100 }), token(2, { status: 'stale', ts: T0 - 100 })]);
    await caughtUp();
    // A second group re-delivers the whole log into the same store.
    const again = startProjections(PROJECTIONS, {
      log,
      codec,
      store,
      logger: silentLogger,
      deadLetters: 'log',
      groupIdOf: (p) => `again.${p.name}`,
    });
    try {
      await waitFor(() => again.caughtUp(), 'the second group to catch up');
    } finally {
      await again.stop();
    }
    expect(await store.query(sql`SELECT count(*) AS n FROM ${table(mentions)}`)).toEqual([{ n: 3 }]);
    const picked = columns(tokens, ['token_id', 'status', 'ts']);
    const statuses = sql`SELECT ${picked} FROM ${table(tokens)} ORDER BY ${column(tokens, 'token_id')}`;
    expect(await store.query(statuses)).toEqual([
      { token_id: 'tk_1', status: 'delisted', ts: T0 + 100 },
      { token_id: 'tk_2', status: 'active', ts: T0 + 2 },
    ]);
  });

  it('sends records that fail decoding or validation to the dead-letter topic with the reason, and projects them', async () => {
    const junk = Buffer.from('not avro at all');
    await log.append(TOPICS.mentions.name, [{ key: 'tk_junk', value: junk, timestamp: T0 + 5 }]);
    await produceMentions(log, codec, [{ ...mention(9), mentionId: 'not-a-mention-id' }]);
    await caughtUp();

    const letters = await Promise.all(
      (await readTopic(log, TOPICS.deadLetters.name)).map(async (r) => (await codec.decode(r.topic, r.value!)) as DeadLetter),
    );
    const ours = letters.filter((l) => l.stage === 'projection.mentions');
    expect(ours).toHaveLength(2);
    expect(ours[0]).toMatchObject({ source: TOPICS.mentions.name, key: 'tk_junk', ts: T0 + 5, line: null, payload: junk });
    expect(ours[0].reason).toMatch(/^decoding failed: .*magic byte/);
    expect(ours[1].reason).toMatch(/^validation failed: mentionId: /);

    await caughtUp();
    const rows = await waitFor(async () => {
      const found = await store.query(everyRow(PROJECTION_TABLES.dead_letters));
      return found.length === 2 && found;
    }, 'the dead letters in the store');
    const junkRow = rows.find((r) => r.key === 'tk_junk');
    expect(junkRow).toMatchObject({ stage: 'projection.mentions', payload: junk.toString('base64'), ts: T0 + 5, line: null });
    const where = [TOPICS.mentions.name, junkRow?.partition, junkRow?.offset, null, 'projection.mentions'];
    expect(junkRow?.id).toBe(JSON.stringify(where));
  });

  it('maps only the newest snapshot of each token in a batch, the one the store keeps, and still dead-letters a bad one', async () => {
    const topic = TOPICS.snapshotsLatest.name;
    const scoreDetails = SCORE_NAMES.map((score) => ({ score, value: null, drivers: [], confidence: 'LOW' as const, reason: 'no data yet', modelVersion: 'test@1' }));
    const ofToken = (tokenId: string, ts: number, symbol: string) => blankSnapshot(tokenId, T0 + ts, { symbol, scoreDetails });
    // tk_n1: its newest time comes twice (the later wins, as in the store), an older one last; tk_n2: two in order.
    const sent = [ofToken('tk_n1', 3, 'FIRST'), ofToken('tk_n1', 1, 'OLD'), ofToken('tk_n1', 3, 'LATER'), ofToken('tk_n1', 2, 'LATE'), ofToken('tk_n2', 4, 'B4'), ofToken('tk_n2', 5, 'B5')];
    const encoded = await Promise.all(sent.map(async (v) => ({ key: v.tokenId, value: await codec.encode(topic, v), timestamp: v.ts })));
    // One append, so that each partition's records reach the runner started after it in one batch.
    await log.append(topic, [...encoded, { key: 'tk_n1', value: Buffer.from('not avro at all'), timestamp: T0 + 9 }]);
    const newestOnly = startProjections([latestSnapshotsProjection], { log, codec, store, logger: silentLogger, deadLetters: 'log', groupIdOf: () => 'newest.latest-snapshots' });
    try {
      await waitFor(() => newestOnly.caughtUp(), 'the runner to catch up');
    } finally {
      await newestOnly.stop();
    }
    expect(newestOnly.runners[0].stats()).toMatchObject({ records: sent.length + 1, rowsWritten: 2, failed: 1 });
    const kept = sql`SELECT ${columns(latestSnapshots)} FROM ${table(latestSnapshots)} WHERE token_id IN ('tk_n1', 'tk_n2') ORDER BY token_id`;
    expect(await store.query(kept)).toEqual([latestSnapshotRow(sent[2]), latestSnapshotRow(sent[5])]);
  });

  it('does not commit a batch whose rows could not be stored, and stores it once the store recovers', async () => {
    const stored = new Set<string>();
    const flaky = failingStore(store, 2, (name, rows) => {
      if (name === 'mentions') for (const row of rows as readonly MentionRow[]) stored.add(row.mention_id);
    });
    await produceMentions(log, codec, [mention(20), mention(21)]);
    const group = 'flaky.mentions';
    const runner = startProjections([mentionsProjection], {
      log,
      codec,
      store: flaky.store,
      logger: silentLogger,
      deadLetters: 'log',
      groupIdOf: () => group,
    });
    try {
      await waitFor(() => runner.caughtUp(), 'the flaky runner to catch up');
    } finally {
      await runner.stop();
    }
    expect(flaky.failed).toBe(2);
    expect([...stored].sort()).toEqual([1, 2, 3, 20, 21].map((i) => mention(i).mentionId));
    const committed = await log.committedOffsets(group, TOPICS.mentions.name);
    const ends = await log.endOffsets(TOPICS.mentions.name);
    expect(committed).toEqual(ends.filter((e) => e.offset > 0).map((e) => ({ ...e, metadata: null })));
    expect(await store.query(sql`SELECT count(*) AS n FROM ${table(mentions)}`)).toEqual([{ n: 5 }]);
  });

  it('fails a replay whose store fails rather than reporting it caught up', async () => {
    const broken = failingStore(store, Infinity);
    await expect(
      replayProjections({ projections: PROJECTIONS, log, codec, store: broken.store, logger: silentLogger, runId: 'broken' }),
    ).rejects.toThrow('disk full');
  });

  it('replay into an empty store gives the same tables as the live store', async () => {
    await caughtUp();
    const expected = await dump(store);
    expect(expected.tokens.length).toBeGreaterThan(0);
    expect(expected.mentions.length).toBeGreaterThan(0);
    expect(expected.dead_letters.length).toBeGreaterThan(0);

    const path = join(dir, 'replayed.duckdb');
    const result = await replay(config, ['--from-beginning', '--store-path', path]);
    expect(result.stderr).toContain('replay');
    // The two records of the dead-letter test and the bad snapshot of the newest-only test.
    expect(result.stdout).toMatch(/replayed \d+ events .* events\/s; \d+ rows written; 3 records refused/);
    expect(result.code).toBe(0);
    const replayed = await openStore(config, silentLogger, { duckdbPath: path });
    try {
      expect(await dump(replayed)).toEqual(expected);
    } finally {
      await replayed.close();
    }
    // Nothing left beside the target, and no live group moved.
    expect((await readdir(dir)).filter((f) => f.includes('.replay-'))).toEqual([]);
    expect(await log.committedOffsets('projection.mentions', TOPICS.mentions.name)).toEqual(
      (await log.endOffsets(TOPICS.mentions.name)).filter((e) => e.offset > 0).map((e) => ({ ...e, metadata: null })),
    );
  });

  it('replay replaces the data dir store once it finished, and --only needs another target there', async () => {
    await caughtUp();
    const expected = await dump(store);
    await live.stop();
    await store.close();

    await expect(replay(config, ['--only', 'mentions'])).rejects.toThrow(UsageError);
    expect((await replay(config, [])).code).toBe(0);
    store = await openStore(config, silentLogger);
    expect(await dump(store)).toEqual(expected);
    live = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store, logger: silentLogger });
  });
});
