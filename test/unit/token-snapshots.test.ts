import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TokenSnapshots } from '../../api/services/token-snapshots.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { sql } from '../../infra/store/sql-literal.ts';
import { latestSnapshotRow } from '../../projections/latest-snapshots.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { waitFor } from '../../infra/wait.ts';
import { alphaToken, blankSnapshot } from '../helpers/quant-snapshot.ts';

/** The token snapshot endpoints' cache: how late a new snapshot may show, and what is never kept. */

const T0 = 1_750_000_000_000;
const TTL = 1_000;

const token: TokenRow = alphaToken(T0);

const snapshot = (ts: number): QuantSnapshot => blankSnapshot('tk_a', ts);

describe('TokenSnapshots', () => {
  let store: DuckDbStore<typeof PROJECTION_TABLES>;
  let clock: number;
  let snapshots: TokenSnapshots;
  let queries: number;

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    clock = T0;
    queries = 0;
    const counting = { query: ((statement: Parameters<typeof store.query>[0]) => (queries++, store.query(statement))) as typeof store.query };
    snapshots = new TokenSnapshots({ store: counting, now: () => clock, ttlMs: TTL });
  });

  afterEach(async () => {
    await store.close();
  });

  const found = async (ref: string) => (await snapshots.find(ref))?.snapshot?.ts ?? null;

  it('keeps neither an unknown token nor a token without a snapshot', async () => {
    expect(await snapshots.find('$AAA')).toBeNull();
    await store.upsert('tokens', [token]);
    expect(await snapshots.find('$AAA')).toEqual({ token, snapshot: null });
    await store.upsert('latest_snapshots', [latestSnapshotRow(snapshot(T0))]);
    expect(await snapshots.find('$AAA')).toEqual({ token, snapshot: snapshot(T0) });
  });

  it('loads a pair once for requests that come while it is being loaded', async () => {
    await store.upsert('tokens', [token]);
    await store.upsert('latest_snapshots', [latestSnapshotRow(snapshot(T0))]);
    expect(await found('tk_a')).toBe(T0);
    const oneLoad = queries;

    // Too old to serve: every request waits for the same reload, which sees the new snapshot.
    await store.upsert('latest_snapshots', [latestSnapshotRow(snapshot(T0 + 300_000))]);
    clock += 2 * TTL;
    const reloaded = await Promise.all(Array.from({ length: 8 }, () => found('tk_a')));
    expect(reloaded).toEqual(Array(8).fill(T0 + 300_000));
    expect(queries).toBe(2 * oneLoad);
  });

  it('serves a found pair from memory, refreshes it in the background after ttl, and reloads it after twice that', async () => {
    await store.upsert('tokens', [token]);
    await store.upsert('latest_snapshots', [latestSnapshotRow(snapshot(T0))]);
    expect(await found('tk_a')).toBe(T0);
    const afterLoad = queries;
    await store.upsert('latest_snapshots', [latestSnapshotRow(snapshot(T0 + 300_000))]);

    clock += TTL - 1;
    expect(await found('tk_a')).toBe(T0);
    expect(queries).toBe(afterLoad);

    // Past ttl: the old pair answers while one refresh loads the new one.
    clock += 1;
    expect(await found('tk_a')).toBe(T0);
    expect(await found('tk_a')).toBe(T0);
    await waitFor(async () => (await found('tk_a')) === T0 + 300_000, 'the background refresh');
    expect(queries).toBe(afterLoad + 2);

    // Untouched for twice the ttl: loaded before answering.
    await store.upsert('latest_snapshots', [latestSnapshotRow(snapshot(T0 + 600_000))]);
    clock += 2 * TTL;
    expect(await found('tk_a')).toBe(T0 + 600_000);
  });

  it('refreshes every token id that fell due in one pass of two queries, and resolves a symbol again on its own', async () => {
    const ids = ['tk_a', 'tk_b', 'tk_c', 'tk_d', 'tk_e'];
    await store.upsert('tokens', ids.map((id, i) => ({ ...token, token_id: id, symbol: `SYM${i}` })));
    await store.upsert('latest_snapshots', ids.map((id) => latestSnapshotRow(blankSnapshot(id, T0))));
    for (const id of ids) expect(await found(id)).toBe(T0);
    expect(await found('$SYM0')).toBe(T0);
    await store.upsert('latest_snapshots', ids.map((id) => latestSnapshotRow(blankSnapshot(id, T0 + 300_000))));
    const loaded = queries;

    clock += TTL;
    // Past ttl every pair still answers as loaded, and falls due.
    for (const ref of [...ids, '$SYM0']) expect(await found(ref)).toBe(T0);
    await waitFor(async () => (await Promise.all([...ids, '$SYM0'].map(found))).every((ts) => ts === T0 + 300_000), 'the refresh');
    // Two queries for the five ids, and the symbol's own load (resolution and snapshot).
    expect(queries - loaded).toBe(4);
  });

  it('loads the token ids asked for together in one batch of two queries', async () => {
    const ids = ['tk_a', 'tk_b', 'tk_c', 'tk_d', 'tk_e'];
    await store.upsert('tokens', ids.map((id, i) => ({ ...token, token_id: id, symbol: `SYM${i}` })));
    await store.upsert('latest_snapshots', ids.slice(1).map((id) => latestSnapshotRow(blankSnapshot(id, T0))));
    const answers = await Promise.all([...ids, 'tk_zz'].map((id) => snapshots.find(id)));
    expect(answers.map((found) => found && [found.token.token_id, found.snapshot?.ts ?? null])).toEqual([['tk_a', null], ...ids.slice(1).map((id) => [id, T0]), null]);
    expect(queries).toBe(2);
  });

  it('drops a pair whose refresh fails, so the next request meets the error', async () => {
    await store.upsert('tokens', [token]);
    await store.upsert('latest_snapshots', [latestSnapshotRow(snapshot(T0))]);
    expect(await found('tk_a')).toBe(T0);
    await store.query(sql`DROP TABLE latest_snapshots`);
    clock += TTL;
    expect(await found('tk_a')).toBe(T0);
    await waitFor(async () => {
      try {
        await snapshots.find('tk_a');
        return false;
      } catch {
        return true;
      }
    }, 'the failed refresh to drop the pair');
  });
});
