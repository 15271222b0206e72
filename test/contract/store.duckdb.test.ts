import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { columns, sql, table } from '../../infra/store/sql-literal.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import { tokens } from '../../presenters/tokens-table.ts';
import { outcomes } from '../../projections/tables/social.ts';
import { describeCheckpointContract } from './checkpoints.contract.ts';
import { describeStoreContract, type StoreFactory } from './store.contract.ts';

const logger = pino({ level: 'silent' });

const inMemoryStore: StoreFactory = async (tables, dir) => {
  const store = await DuckDbStore.open({
    path: ':memory:',
    tables,
    migrationsDir: dir ?? migrationsDir('duckdb'),
    logger,
  });
  return { store, cleanup: () => store.close() };
};

describeStoreContract('duckdb', inMemoryStore);
describeCheckpointContract('duckdb', inMemoryStore);

describe('DuckDbStore under load', () => {
  it('answers the health probe at once while every read connection is busy and more reads wait', async () => {
    const store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger, readConnections: 2 });
    try {
      const done: string[] = [];
      // Each read takes hundreds of milliseconds; two run, two wait for a connection.
      const reads = [0, 1, 2, 3].map((i) => store.queryText('SELECT count(*) AS n FROM range(50000000) WHERE hash(range) % 7 = 0', {}).then(() => done.push(`read ${i}`)));
      const probe = store.ping().then((up) => done.push(`probe ${up}`));
      await Promise.all([...reads, probe]);
      expect(done[0]).toBe('probe true');
    } finally {
      await store.close();
    }
  });
});

describe('DuckDbStore on a file', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('keeps rows and applied migrations across reopening', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-duckdb-'));
    dirs.push(dir);
    const options = { path: join(dir, 'store.duckdb'), tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger };
    const row = {
      token_id: 'tk_a',
      ts: 1_700_000_000_000,
      symbol: 'A',
      name: 'nul\u0000 and \'quotes\'',
      chain: 'base',
      address: '0x1111111111111111111111111111111111111111',
      logo_url: null,
      status: 'active',
      narrative: 'memes',
      source_url: null,
    };

    const first = await DuckDbStore.open(options);
    await first.migrate();
    await first.upsert('tokens', [row]);
    await first.close();

    const second = await DuckDbStore.open(options);
    try {
      expect((await second.migrate()).applied).toEqual([]);
      expect(await second.query(sql`SELECT ${columns(tokens)} FROM ${table(tokens)}`)).toEqual([row]);
    } finally {
      await second.close();
    }
  });

  it('opens DuckDB with the memory limit and checkpoint threshold it is given', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-duckdb-'));
    dirs.push(dir);
    const store = await DuckDbStore.open({
      path: join(dir, 'store.duckdb'),
      tables: PROJECTION_TABLES,
      migrationsDir: migrationsDir('duckdb'),
      logger,
      memoryLimit: '300MiB',
      checkpointThreshold: '96MiB',
    });
    try {
      const settings = sql`SELECT current_setting('memory_limit') AS memory, current_setting('checkpoint_threshold') AS threshold`;
      expect(await store.query(settings)).toEqual([{ memory: '300.0 MiB', threshold: '96.0 MiB' }]);
    } finally {
      await store.close();
    }
  });

  it('moves the outcomes a store held before 0026 into the table without a key index, which then upserts by merge', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-duckdb-'));
    dirs.push(dir);
    const before = join(dir, 'before-0026');
    const shipped = migrationsDir('duckdb');
    await mkdir(before);
    for (const file of await readdir(shipped)) if (file < '0026') await copyFile(join(shipped, file), join(before, file));
    const path = join(dir, 'store.duckdb');
    const outcome = {
      outcome_id: 'out_a',
      subject_kind: 'call',
      subject_id: 'call_a',
      token_id: 'tk_a',
      subject_ts: 1_700_000_000_000,
      horizon: '1h',
      entry_price: 2,
      forward_return: null,
      max_drawdown: null,
      peak_return: null,
      time_to_peak_ms: null,
      died: true,
      last_price: null,
      resolved_at: 1_700_003_600_000,
    };
    const old = await DuckDbStore.open({ path, tables: {}, migrationsDir: before, logger });
    await old.migrate();
    await old.query(sql`INSERT INTO ${table(outcomes)} VALUES ('out_a', 'call', 'call_a', 'tk_a', 1700000000000, '1h', 2, NULL, NULL, NULL, NULL, true, NULL, 1700003600000)`);
    await old.close();

    const migrated = await DuckDbStore.open({ path, tables: PROJECTION_TABLES, migrationsDir: shipped, logger });
    try {
      // 0026 and every later migration, in order.
      const later = (await readdir(shipped)).filter((file) => file >= '0026').sort().map((file) => file.replace(/\.sql$/, ''));
      expect(later[0]).toBe('0026_outcomes_without_key_index');
      expect((await migrated.migrate()).applied).toEqual(later);
      const all = sql`SELECT ${columns(outcomes)} FROM ${table(outcomes)} ORDER BY outcome_id`;
      expect(await migrated.query(all)).toEqual([outcome]);
      await migrated.upsert('outcomes', [{ ...outcome, resolved_at: outcome.resolved_at + 1, died: false }, { ...outcome, outcome_id: 'out_b' }]);
      expect(await migrated.query(all)).toEqual([{ ...outcome, resolved_at: outcome.resolved_at + 1, died: false }, { ...outcome, outcome_id: 'out_b' }]);
    } finally {
      await migrated.close();
    }
  });
});
