import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SnapshotViews } from '../../api/services/snapshot-views.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { latestSnapshotRow, snapshotHistoryRow } from '../../projections/latest-snapshots.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { SCORE_NAMES } from '../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { alphaToken, blankSnapshot } from '../helpers/quant-snapshot.ts';

/**
 * The API's views of every token's latest snapshot as of a time: which are kept, which are
 * read again after the TTL, and what they share.
 */

const T0 = 1_750_000_200_000 - (1_750_000_200_000 % SNAPSHOT_GRID_MS);
const STEP = SNAPSHOT_GRID_MS;
const TTL = 1_000;

const token: TokenRow = alphaToken(T0);

/** tk_a at `ts`, every score its time since T0 (null at T0). */
const snapshot = (ts: number, symbol = 'AAA'): QuantSnapshot =>
  blankSnapshot('tk_a', ts, { symbol, scores: Object.fromEntries(SCORE_NAMES.map((n) => [n, ts === T0 ? null : ts - T0])) as QuantSnapshot['scores'] });

describe('SnapshotViews', () => {
  let store: DuckDbStore<typeof PROJECTION_TABLES>;
  let clock: number;
  let views: SnapshotViews;
  let queries: number;

  const write = async (...snapshots: QuantSnapshot[]) => {
    await store.upsert('latest_snapshots', snapshots.map(latestSnapshotRow));
    await store.upsert('snapshot_history', snapshots.map(snapshotHistoryRow));
  };
  const timesOf = async (asOf: number) => (await views.viewAsOf(asOf))?.rows.map((r) => r.ts) ?? null;

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    clock = T0 + 10 * STEP;
    queries = 0;
    const counting = { query: ((statement: Parameters<typeof store.query>[0]) => (queries++, store.query(statement))) as typeof store.query };
    views = new SnapshotViews({ store: counting, now: () => clock, ttlMs: TTL });
    await store.upsert('tokens', [token]);
    // One token's snapshots up to T0 + 2 steps: the history is settled up to the step before.
    await write(snapshot(T0), snapshot(T0 + STEP), snapshot(T0 + 2 * STEP));
  });

  afterEach(async () => {
    await store.close();
  });

  it('reads the settled time at most once per TTL', async () => {
    expect(await views.settledTime()).toBe(T0 + STEP);
    await write(snapshot(T0 + 3 * STEP));
    clock += TTL - 1;
    expect(await views.settledTime()).toBe(T0 + STEP);
    clock += 1;
    expect(await views.settledTime()).toBe(T0 + 2 * STEP);
  });

  it('keeps a view of a time the history is settled up to: it never reads it again', async () => {
    const view = await views.viewAsOf(T0 + STEP);
    expect(view?.rows.map((r) => [r.tokenId, r.ts, r.values.momentum])).toEqual([['tk_a', T0 + STEP, STEP]]);
    const afterLoad = queries;
    clock += 100 * TTL;
    expect(await views.viewAsOf(T0 + STEP)).toBe(view);
    expect(queries).toBe(afterLoad);
  });

  it('reads a view of a later time again after the TTL, finding the snapshots stored since', async () => {
    expect(await timesOf(T0 + 3 * STEP)).toEqual([T0 + 2 * STEP]);
    await write(snapshot(T0 + 3 * STEP));
    clock += TTL - 1;
    expect(await timesOf(T0 + 3 * STEP)).toEqual([T0 + 2 * STEP]);
    clock += 1;
    expect(await timesOf(T0 + 3 * STEP)).toEqual([T0 + 3 * STEP]);
  });

  it('has no view of a time before the first snapshot', async () => {
    expect(await views.viewAsOf(T0 - 1)).toBeNull();
  });

  it('shares one load between reads of the same time in flight', async () => {
    const [a, b, c] = await Promise.all([views.viewAsOf(T0 + STEP), views.viewAsOf(T0 + STEP), views.viewAsOf(T0 + STEP)]);
    expect(a).not.toBeNull();
    expect(b).toBe(a);
    expect(c).toBe(a);
  });

  it('keeps the 16 views used last, dropping the least recently used', async () => {
    const first = await views.viewAsOf(T0);
    const second = await views.viewAsOf(T0 + 1);
    for (let i = 2; i < 16; i++) await views.viewAsOf(T0 + i);
    expect(await views.viewAsOf(T0)).toBe(first);
    await views.viewAsOf(T0 + 16);
    expect(await views.viewAsOf(T0)).toBe(first);
    const again = await views.viewAsOf(T0 + 1);
    expect(again).not.toBe(second);
    expect(again?.rows).toEqual(second?.rows);
  });

  it('gives the lower-case symbol and name a search matches, read again after the TTL', async () => {
    expect(await views.searchText()).toEqual({ symbols: new Map([['tk_a', 'aaa']]), names: new Map([['tk_a', 'alpha']]) });
    await write(snapshot(T0 + 3 * STEP, 'AAB'));
    clock += TTL;
    expect((await views.searchText()).symbols).toEqual(new Map([['tk_a', 'aab']]));
  });
});
