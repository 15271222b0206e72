import { readdirSync } from 'node:fs';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BatchedWriter } from '../../infra/store/batched-writer.ts';
import { StoreError } from '../../infra/store/errors.ts';
import type { AnalyticalStore, QueryOptions, Row } from '../../infra/store/port.ts';
import { byDialect, column, columns, float64, list, sql, table, type Dialect, type Sql } from '../../infra/store/sql-literal.ts';
import { defineTable, defineTables, type RowOf, type TableRegistry } from '../../infra/store/table.ts';
import { PROJECTION_TABLES, snapshots, type ProjectionTables, type SnapshotRow } from '../../projections/tables.ts';
import { tokens, type TokenRow } from '../../presenters/tokens-table.ts';
import { outcomes, type OutcomeRow } from '../../projections/tables/social.ts';
import { migrationsDir as shippedMigrations } from '../../projections/migrations/index.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * The behaviour every AnalyticalStore adapter must have. A runner per adapter calls
 * describeStoreContract with a factory giving a fresh, empty, not yet migrated store over the
 * given table definitions, using `migrationsDir` instead of the adapter's own migration folder
 * when one is given (the migration tests bring their own files).
 */
export interface StoreUnderTest<T extends TableRegistry> {
  store: AnalyticalStore<T>;
  cleanup(): Promise<void>;
}

export type StoreFactory = <T extends TableRegistry>(tables: T, migrationsDir?: string) => Promise<StoreUnderTest<T>>;

const T0 = 1_700_000_000_000;
const silent = pino({ level: 'silent' });

function tokenRow(id: string, ts: number, overrides: Partial<TokenRow> = {}): TokenRow {
  return {
    token_id: id,
    ts,
    symbol: 'SYM',
    name: `Token ${id}`,
    chain: 'solana',
    address: 'So11111111111111111111111111111111111111112',
    logo_url: null,
    status: 'active',
    narrative: 'ai-agents',
    source_url: 'https://example.com/tokens',
    ...overrides,
  };
}

function snapshotRow(tokenId: string, ts: number, version: number, overrides: Partial<SnapshotRow> = {}): SnapshotRow {
  return {
    token_id: tokenId,
    ts,
    version,
    price_usd: 1.25,
    momentum: 0.5,
    crowding: null,
    has_market_data: true,
    features: JSON.stringify({ mentions: version }),
    ...overrides,
  };
}

function outcomeRow(id: string, resolvedAt: number, overrides: Partial<OutcomeRow> = {}): OutcomeRow {
  return {
    outcome_id: id,
    subject_kind: 'snapshot',
    subject_id: `snap_${id}`,
    token_id: 'tk_a',
    subject_ts: T0 - 86_400_000,
    horizon: '24h',
    entry_price: 1.5,
    forward_return: 0.25,
    max_drawdown: -0.1,
    peak_return: 0.4,
    time_to_peak_ms: 3_600_000,
    died: false,
    last_price: 1.875,
    resolved_at: resolvedAt,
    ...overrides,
  };
}

const allTokens = sql`SELECT ${columns(tokens)} FROM ${table(tokens)} ORDER BY ${column(tokens, 'token_id')}`;
const allSnapshots = sql`SELECT ${columns(snapshots)} FROM ${table(snapshots)} ORDER BY ${column(snapshots, 'token_id')}, ${column(snapshots, 'ts')}`;

/** Strings that break naive escaping in one dialect or the other. */
const TRICKY_STRINGS = [
  "it's",
  "''",
  '\\',
  'back\\slash',
  "\\'",
  'ends with a backslash\\',
  '\\0 is not a NUL',
  '\\n is not a newline',
  'nul\u0000byte',
  '\u0000',
  '\u0000\u0000leading and trailing\u0000',
  'new\nline',
  'crlf\r\n',
  'tab\there',
  Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join('') + '\u007f',
  'emoji 😀🚀👩‍👩‍👧',
  'ünïcödé 中文 العربية ελληνικά',
  'zero\u200bwidth\u200djoiner',
  'bom\ufeff',
  'rtl \u202e override',
  'nbsp\u00a0',
  '\u{10ffff} highest code point',
  '"double quotes"',
  '`backticks`',
  '-- not a comment',
  '/* not a comment */',
  "'; DROP TABLE tokens; --",
  '${not interpolated}',
  '%_ like wildcards',
  '? $1 :name',
  '',
  ' ',
];

const DOUBLES = [
  0,
  -0,
  0.1,
  1 / 3,
  -2.5e-300,
  1.2345678901234567e-195,
  2.2250738585072014e-308,
  1e-310,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  Number.MAX_VALUE,
  123456789.12345679,
  Number.MAX_SAFE_INTEGER,
  -1e21,
  // Doubles a text parser that is not correctly rounded gets wrong (ClickHouse 18.16's does).
  2.2259412705199868e-10,
  9.911464484112753e-21,
  -3.7747819475955777e-7,
  1.1258760116974865e-14,
];

/** Delegates to a store, counting upserts and failing the next ones with queued errors. */
class ObservedStore implements AnalyticalStore<ProjectionTables> {
  readonly upserts: { table: string; rows: number }[] = [];
  readonly failNext: StoreError[] = [];

  constructor(private readonly inner: AnalyticalStore<ProjectionTables>) {}

  get tables(): ProjectionTables {
    return this.inner.tables;
  }
  migrate() {
    return this.inner.migrate();
  }
  appliedMigrations() {
    return this.inner.appliedMigrations();
  }
  async upsert<N extends keyof ProjectionTables & string>(name: N, rows: readonly RowOf<ProjectionTables[N]>[]) {
    this.upserts.push({ table: name, rows: rows.length });
    const failure = this.failNext.shift();
    if (failure) throw failure;
    return this.inner.upsert(name, rows);
  }
  query<R extends Row = Row>(statement: Sql, options?: QueryOptions) {
    return this.inner.query<R>(statement, options);
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof StoreError)) throw new Error(`expected a StoreError, got ${String(err)}`);
  return err;
}

function thrown(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected a StoreError to be thrown');
}

export function describeStoreContract(name: Dialect, factory: StoreFactory): void {
  describe(`AnalyticalStore contract: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    let store: AnalyticalStore<ProjectionTables>;

    async function open<T extends TableRegistry>(tables: T, migrationsDir?: string): Promise<AnalyticalStore<T>> {
      const sut = await factory(tables, migrationsDir);
      cleanups.push(() => sut.cleanup());
      return sut.store;
    }

    async function count(statement: Sql): Promise<number> {
      const [row] = await store.query<{ n: number }>(statement);
      return row.n;
    }

    beforeEach(async () => {
      store = await open(PROJECTION_TABLES);
    });

    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    describe('migrations', () => {
      it('applies each migration once, records it, and creates the defined tables', async () => {
        // Every migration the store ships applies once, in order.
        const shipped = readdirSync(shippedMigrations(name)).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4)).sort();
        expect(shipped[0]).toBe('0001_init');
        expect((await store.migrate()).applied).toEqual(shipped);
        expect((await store.migrate()).applied).toEqual([]);
        const applied = await store.appliedMigrations();
        expect(applied.map((m) => [m.version, m.name])).toEqual(shipped.map((name) => [Number(name.slice(0, 4)), name]));
        expect(applied[0].checksum).toMatch(/^[0-9a-f]{64}$/);
        expect(await count(sql`SELECT count(*) AS n FROM ${table(tokens)}`)).toBe(0);
        expect(await count(sql`SELECT count(*) AS n FROM ${table(snapshots)}`)).toBe(0);
      });

      it('refuses a table definition that no migration creates', async () => {
        const orphans = defineTable({ name: 'orphans', columns: { id: 'string', v: 'int64' }, key: ['id'], version: 'v' });
        const other = await open(defineTables(tokens, snapshots, orphans));
        const err = await rejection(other.migrate());
        expect(err.code).toBe('STORE_SCHEMA_MISMATCH');
        expect(err.message).toContain('orphans');
      });

      it('refuses a table definition that disagrees with the migrated table', async () => {
        const changed = defineTable({
          name: 'tokens',
          columns: { ...tokens.specs, symbol: 'int64' },
          key: ['token_id'],
          version: 'ts',
        });
        const other = await open(defineTables(changed, snapshots));
        const err = await rejection(other.migrate());
        expect(err.code).toBe('STORE_SCHEMA_MISMATCH');
        expect(err.message).toContain('symbol');
      });

      it('applies new migrations in order and refuses an applied one that was edited', async () => {
        const dir = await mkdtemp(join(tmpdir(), 'tqa-migrations-'));
        cleanups.push(() => rm(dir, { recursive: true, force: true }));
        await writeFile(join(dir, '0001_first.sql'), '-- checks nothing; one statement\nSELECT 1;\n');
        const other = await open({}, dir);
        expect((await other.migrate()).applied).toEqual(['0001_first']);

        await writeFile(join(dir, '0002_second.sql'), 'SELECT 2;\nSELECT 3;\n');
        expect((await other.migrate()).applied).toEqual(['0002_second']);
        expect((await other.appliedMigrations()).map((m) => m.name)).toEqual(['0001_first', '0002_second']);

        await appendFile(join(dir, '0001_first.sql'), 'SELECT 4;\n');
        const err = await rejection(other.migrate());
        expect(err.code).toBe('STORE_MIGRATION_CHANGED');
        expect(err.message).toContain('0001_first');
      });
    });

    describe('upsert', () => {
      beforeEach(async () => {
        await store.migrate();
      });

      it('leaves one copy when the same batch is written twice', async () => {
        const batch = [tokenRow('tk_a', T0), tokenRow('tk_b', T0 + 1), tokenRow('tk_c', T0 + 2)];
        await store.upsert('tokens', batch);
        await store.upsert('tokens', batch);
        expect(await store.query(allTokens)).toEqual(batch);
      });

      it('keeps the newer version when an older one arrives later', async () => {
        await store.upsert('tokens', [tokenRow('tk_a', T0 + 10, { symbol: 'NEW' })]);
        await store.upsert('tokens', [tokenRow('tk_a', T0, { symbol: 'OLD' })]);
        expect(await store.query(allTokens)).toEqual([tokenRow('tk_a', T0 + 10, { symbol: 'NEW' })]);

        await store.upsert('snapshots', [snapshotRow('tk_a', T0, 2, { momentum: 2 })]);
        await store.upsert('snapshots', [snapshotRow('tk_a', T0, 1, { momentum: 1 })]);
        expect(await store.query(allSnapshots)).toEqual([snapshotRow('tk_a', T0, 2, { momentum: 2 })]);
      });

      it('keeps the highest version of a key written several times in one batch', async () => {
        await store.upsert('snapshots', [
          snapshotRow('tk_a', T0, 1, { momentum: 1 }),
          snapshotRow('tk_a', T0, 3, { momentum: 3 }),
          snapshotRow('tk_a', T0, 2, { momentum: 2 }),
          snapshotRow('tk_a', T0 + 1, 1, { momentum: 10 }),
        ]);
        expect(await store.query(allSnapshots)).toEqual([
          snapshotRow('tk_a', T0, 3, { momentum: 3 }),
          snapshotRow('tk_a', T0 + 1, 1, { momentum: 10 }),
        ]);
      });

      it('replaces a row with the same version written later', async () => {
        await store.upsert('tokens', [tokenRow('tk_a', T0, { status: 'first' })]);
        await store.upsert('tokens', [tokenRow('tk_a', T0, { status: 'second' })]);
        expect(await store.query(allTokens)).toEqual([tokenRow('tk_a', T0, { status: 'second' })]);
      });

      it('upserts a table without a key index the same way: once per key, the newest version kept', async () => {
        expect(outcomes.keyIndex).toBe(false);
        const allOutcomes = sql`SELECT ${columns(outcomes)} FROM ${table(outcomes)} ORDER BY ${column(outcomes, 'outcome_id')}`;
        const batch = [outcomeRow('out_a', T0), outcomeRow('out_b', T0 + 1)];
        await store.upsert('outcomes', batch);
        await store.upsert('outcomes', batch);
        expect(await store.query(allOutcomes)).toEqual(batch);

        await store.upsert('outcomes', [outcomeRow('out_a', T0 - 1, { forward_return: -1 }), outcomeRow('out_b', T0 + 1, { forward_return: 2 })]);
        await store.upsert('outcomes', [
          outcomeRow('out_c', T0 + 3, { forward_return: 3 }),
          outcomeRow('out_c', T0 + 5, { forward_return: 5 }),
          outcomeRow('out_c', T0 + 4, { forward_return: 4 }),
        ]);
        expect(await store.query(allOutcomes)).toEqual([
          outcomeRow('out_a', T0),
          outcomeRow('out_b', T0 + 1, { forward_return: 2 }),
          outcomeRow('out_c', T0 + 5, { forward_return: 5 }),
        ]);
      });

      it('round-trips strings unchanged, through rows and through literals', async () => {
        const rows = TRICKY_STRINGS.map((s, i) =>
          tokenRow(`tk_${i}`, T0 + i, { name: s, logo_url: s, symbol: `S${i}` }),
        );
        await store.upsert('tokens', rows);
        const back = await store.query<TokenRow>(allTokens);
        const byId = new Map(back.map((r) => [r.token_id, r]));
        for (const row of rows) expect(byId.get(row.token_id)).toEqual(row);

        // Literals must denote exactly the stored bytes: every string finds its own row.
        const matched = await count(
          sql`SELECT count(*) AS n FROM ${table(tokens)} WHERE ${column(tokens, 'name')} IN ${list(TRICKY_STRINGS)}`,
        );
        expect(matched).toBe(TRICKY_STRINGS.length);
        for (const [i, s] of TRICKY_STRINGS.entries()) {
          const found = await store.query(
            sql`SELECT ${column(tokens, 'token_id')} FROM ${table(tokens)} WHERE ${column(tokens, 'name')} = ${s}`,
          );
          expect(found).toEqual([{ token_id: `tk_${i}` }]);
        }
        const [echo] = await store.query<{ v: string[] }>(sql`SELECT ${TRICKY_STRINGS} AS v`);
        expect(echo.v).toEqual(TRICKY_STRINGS);
      });

      it('round-trips JSON text with the same strings', async () => {
        const features = JSON.stringify({ strings: TRICKY_STRINGS, nested: { n: 1.5 } });
        await store.upsert('snapshots', [snapshotRow('tk_j', T0, 1, { features })]);
        const [row] = await store.query<SnapshotRow>(allSnapshots);
        expect(row.features).toBe(features);
      });

      it('round-trips doubles and 64-bit integers exactly', async () => {
        const rows = DOUBLES.map((d, i) =>
          snapshotRow('tk_f', T0 + i, i % 2 === 0 ? Number.MAX_SAFE_INTEGER - i : i, { momentum: d, price_usd: -d }),
        );
        rows.push(snapshotRow('tk_g', T0, Number.MIN_SAFE_INTEGER, { momentum: null, price_usd: null, crowding: null }));
        await store.upsert('snapshots', rows);
        const back = await store.query<SnapshotRow>(allSnapshots);
        expect(back).toEqual(rows);

        const [echo] = await store.query<{ v: number[]; one: number; neg: number }>(
          sql`SELECT ${DOUBLES} AS v, ${float64(1)} AS one, ${-7} AS neg`,
        );
        expect(echo.v).toEqual(DOUBLES);
        expect(echo).toMatchObject({ one: 1, neg: -7 });
      });

      it('returns booleans and nulls as the definition types them', async () => {
        await store.upsert('snapshots', [
          snapshotRow('tk_a', T0, 1, { has_market_data: true }),
          snapshotRow('tk_b', T0, 1, { has_market_data: false, price_usd: null }),
        ]);
        const rows = await store.query(sql`SELECT ${columns(snapshots, ['token_id', 'has_market_data', 'price_usd'])} FROM ${table(snapshots)} ORDER BY ${column(snapshots, 'token_id')}`);
        expect(rows).toEqual([
          { token_id: 'tk_a', has_market_data: true, price_usd: 1.25 },
          { token_id: 'tk_b', has_market_data: false, price_usd: null },
        ]);
        const flags = await store.query(
          sql`SELECT ${column(snapshots, 'has_market_data')} AS flag FROM ${table(snapshots)} WHERE ${column(snapshots, 'has_market_data')} = ${true}`,
          { types: { flag: 'bool' } },
        );
        expect(flags).toEqual([{ flag: true }]);
      });

      it('refuses values the stores cannot hold before sending anything', async () => {
        const bad: [string, Partial<SnapshotRow>][] = [
          ['NaN', { momentum: Number.NaN }],
          ['Infinity', { price_usd: Number.POSITIVE_INFINITY }],
          ['fractional int64', { version: 1.5 }],
          ['int64 beyond 2^53', { version: 2 ** 53 }],
          ['lone surrogate', { token_id: 'tk_\ud800' }],
          ['null in a non-nullable column', { features: null as unknown as string }],
          ['invalid JSON text', { features: '{not json' }],
          ['wrong type', { has_market_data: 1 as unknown as boolean }],
        ];
        for (const [what, overrides] of bad) {
          const err = await rejection(store.upsert('snapshots', [snapshotRow('tk_a', T0, 1, overrides)]));
          expect(err.code, what).toBe('STORE_INVALID_VALUE');
        }
        const { features: _, ...missing } = snapshotRow('tk_a', T0, 1);
        expect((await rejection(store.upsert('snapshots', [missing as SnapshotRow]))).code).toBe('STORE_INVALID_VALUE');
        expect(thrown(() => sql`SELECT ${Number.NaN}`).code).toBe('STORE_INVALID_VALUE');
        expect(thrown(() => sql`SELECT ${'\udc00'}`).code).toBe('STORE_INVALID_VALUE');
        expect(await count(sql`SELECT count(*) AS n FROM ${table(snapshots)}`)).toBe(0);
      });

      it('refuses identifiers outside the definitions before any SQL is built', async () => {
        await store.upsert('tokens', [tokenRow('tk_a', T0)]);
        expect(thrown(() => column(tokens, 'symbol; DROP TABLE tokens')).code).toBe('STORE_UNKNOWN_IDENTIFIER');
        expect(thrown(() => columns(tokens, ['token_id', 'password'])).code).toBe('STORE_UNKNOWN_IDENTIFIER');
        expect(thrown(() => table(tokens, 'x"; DROP TABLE tokens; --')).code).toBe('STORE_UNKNOWN_IDENTIFIER');

        const evilTable = 'tokens; DROP TABLE tokens' as 'tokens';
        expect((await rejection(store.upsert(evilTable, [tokenRow('tk_b', T0)]))).code).toBe('STORE_UNKNOWN_IDENTIFIER');
        expect((await rejection(store.upsert('toString' as 'tokens', [tokenRow('tk_b', T0)]))).code).toBe(
          'STORE_UNKNOWN_IDENTIFIER',
        );
        const evilColumn = { ...tokenRow('tk_b', T0), 'name") VALUES (1); DROP TABLE tokens; --': 'x' };
        expect((await rejection(store.upsert('tokens', [evilColumn]))).code).toBe('STORE_UNKNOWN_IDENTIFIER');
        expect(await store.query(allTokens)).toEqual([tokenRow('tk_a', T0)]);

        // Refused before reaching the store at all: a closed store still answers with the
        // identifier error, not with STORE_CLOSED.
        await store.close();
        expect((await rejection(store.upsert(evilTable, [tokenRow('tk_b', T0)]))).code).toBe('STORE_UNKNOWN_IDENTIFIER');
        expect((await rejection(store.upsert('tokens', [evilColumn]))).code).toBe('STORE_UNKNOWN_IDENTIFIER');
      });

      it('writes and reads back a 20,000-row batch', async () => {
        const rows: SnapshotRow[] = [];
        for (let t = 0; t < 2_000; t++) {
          for (let i = 0; i < 10; i++) {
            const id = `tk_${String(t).padStart(4, '0')}`;
            rows.push(
              snapshotRow(id, T0 + i * 60_000, t * 10 + i, {
                momentum: (t * 7919 + i) / 1000.5,
                crowding: i % 3 === 0 ? null : i / 7,
                has_market_data: i % 2 === 0,
              }),
            );
          }
        }
        await store.upsert('snapshots', rows);
        expect(await count(sql`SELECT count(*) AS n FROM ${table(snapshots)}`)).toBe(20_000);
        expect(await store.query(allSnapshots)).toEqual(rows);
      });

      it('renders the text of each dialect where they differ', async () => {
        await store.upsert('snapshots', [
          snapshotRow('tk_a', T0, 1, { momentum: 1 }),
          snapshotRow('tk_a', T0 + 1, 1, { momentum: 3 }),
          snapshotRow('tk_a', T0 + 2, 1, { momentum: 2 }),
        ]);
        const momentum = column(snapshots, 'momentum');
        const ts = column(snapshots, 'ts');
        const latest = byDialect({ duckdb: sql`arg_max(${momentum}, ${ts})`, clickhouse: sql`argMax(${momentum}, ${ts})` });
        expect(await store.query(sql`SELECT ${latest} AS latest FROM ${table(snapshots)}`)).toEqual([{ latest: 2 }]);
      });

      it('refuses a result integer JavaScript cannot hold exactly', async () => {
        const err = await rejection(store.query(sql`SELECT 9007199254740993 AS big`));
        expect(err.code).toBe('STORE_UNREPRESENTABLE_RESULT');
      });
    });

    describe('health and lifecycle', () => {
      it('answers ping while open, and after close pings false and refuses calls', async () => {
        expect(await store.ping()).toBe(true);
        await store.migrate();
        await store.close();
        expect(await store.ping()).toBe(false);
        expect((await rejection(store.upsert('tokens', [tokenRow('tk_a', T0)]))).code).toBe('STORE_CLOSED');
        expect((await rejection(store.query(sql`SELECT 1 AS one`))).code).toBe('STORE_CLOSED');
        expect((await rejection(store.migrate())).code).toBe('STORE_CLOSED');
      });
    });

    describe('batched writer', () => {
      let observed: ObservedStore;

      beforeEach(async () => {
        await store.migrate();
        observed = new ObservedStore(store);
      });

      const tokenCount = () => count(sql`SELECT count(*) AS n FROM ${table(tokens)}`);
      const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => tokenRow(`tk_${from + i}`, T0));

      it('flushes a table once it holds maxRows, one upsert per flush, and the rest on close', async () => {
        const writer = new BatchedWriter(observed, { logger: silent, maxRows: 100, flushIntervalMs: 3_600_000 });
        writer.write('tokens', batch(0, 60));
        expect(writer.metrics().bufferedRows).toBe(60);
        writer.write('tokens', batch(60, 40));
        // The full buffer was taken as one batch at once; its upsert follows asynchronously.
        expect(writer.metrics().bufferedRows).toBe(0);
        await waitFor(async () => (await tokenCount()) === 100, '100 rows written by size');
        expect(observed.upserts).toEqual([{ table: 'tokens', rows: 100 }]);

        writer.write('tokens', batch(100, 99));
        expect(writer.metrics().bufferedRows).toBe(99);
        writer.write('tokens', batch(199, 1));
        writer.write('tokens', batch(200, 50));
        expect(writer.metrics().bufferedRows).toBe(50);
        await waitFor(() => observed.upserts.length === 2, 'the second batch to be written');

        await writer.close();
        expect(observed.upserts).toEqual([
          { table: 'tokens', rows: 100 },
          { table: 'tokens', rows: 100 },
          { table: 'tokens', rows: 50 },
        ]);
        expect(await tokenCount()).toBe(250);
        expect(writer.metrics()).toMatchObject({ rowsWritten: 250, flushes: 3, bufferedRows: 0, retries: 0 });
        expect(writer.metrics().lastFlushLatencyMs).toBeGreaterThan(0);
        expect(() => writer.write('tokens', batch(0, 1))).toThrow(StoreError);
      });

      it('writes each table with its own upsert', async () => {
        const writer = new BatchedWriter(observed, { logger: silent, flushIntervalMs: 3_600_000 });
        writer.write('tokens', batch(0, 3));
        writer.write('snapshots', [snapshotRow('tk_0', T0, 1)]);
        writer.write('tokens', batch(3, 2));
        await writer.flush();
        expect([...observed.upserts].sort((a, b) => a.table.localeCompare(b.table))).toEqual([
          { table: 'snapshots', rows: 1 },
          { table: 'tokens', rows: 5 },
        ]);
        expect(await tokenCount()).toBe(5);
        await writer.close();
      });

      it('flushes on its interval without being asked', async () => {
        const writer = new BatchedWriter(observed, { logger: silent, maxRows: 1_000, flushIntervalMs: 20 });
        writer.write('tokens', batch(0, 5));
        await waitFor(async () => (await tokenCount()) === 5, 'rows written by the interval');
        expect(observed.upserts).toEqual([{ table: 'tokens', rows: 5 }]);
        await writer.close();
      });

      it('retries transient failures with backoff', async () => {
        const writer = new BatchedWriter(observed, {
          logger: silent,
          flushIntervalMs: 3_600_000,
          retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
        });
        observed.failNext.push(
          new StoreError('STORE_UNAVAILABLE', 'connection refused', true),
          new StoreError('STORE_UNAVAILABLE', 'timeout', true),
        );
        writer.write('tokens', batch(0, 10));
        await writer.flush();
        expect(observed.upserts).toHaveLength(3);
        expect(writer.metrics()).toMatchObject({ retries: 2, flushes: 1, rowsWritten: 10 });
        expect(await tokenCount()).toBe(10);
        await writer.close();
      });

      it('stops at a permanent failure and reports it to every later call', async () => {
        const writer = new BatchedWriter(observed, {
          logger: silent,
          flushIntervalMs: 3_600_000,
          retry: { attempts: 5, baseDelayMs: 1, maxDelayMs: 5 },
        });
        const failure = new StoreError('STORE_QUERY_FAILED', 'table is gone');
        observed.failNext.push(failure);
        writer.write('tokens', batch(0, 10));
        await expect(writer.flush()).rejects.toBe(failure);
        expect(observed.upserts).toHaveLength(1);
        expect(() => writer.write('tokens', batch(10, 1))).toThrow(failure);
        await expect(writer.close()).rejects.toBe(failure);
        expect(await tokenCount()).toBe(0);
      });

      it('refuses rows for unknown tables and invalid rows when they are written', async () => {
        const writer = new BatchedWriter(observed, { logger: silent, flushIntervalMs: 3_600_000 });
        expect(thrown(() => writer.write('nope' as 'tokens', batch(0, 1))).code).toBe('STORE_UNKNOWN_IDENTIFIER');
        expect(thrown(() => writer.write('tokens', [tokenRow('tk_a', Number.NaN)])).code).toBe('STORE_INVALID_VALUE');
        expect(writer.metrics().bufferedRows).toBe(0);
        await writer.close();
        expect(observed.upserts).toEqual([]);
      });
    });
  });
}
