import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SignalFeed } from '../../api/services/signal-feed.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import type { QueryOptions, Row } from '../../infra/store/port.ts';
import type { Sql } from '../../infra/store/sql-literal.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { signalFeed } from '../../projections/read-models/signals.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { signalRow } from '../../projections/signals.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { signal } from '../contract/read-models-quant.contract.ts';

const T0 = 1_750_000_000_000;
const HOUR = 3_600_000;

describe('SignalFeed', () => {
  let store: DuckDbStore<typeof PROJECTION_TABLES>;
  let now = 0;
  /** Rows each statement read, in order. */
  let reads: number[];
  let feed: SignalFeed;

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    now = 0;
    reads = [];
    // Reads whichever store `store` holds at the time.
    const counted: ReadStore = {
      query: async <R extends Row>(statement: Sql, options?: QueryOptions) => {
        const rows = await store.query<R>(statement, options);
        reads.push(rows.length);
        return rows;
      },
    };
    feed = new SignalFeed({ store: counted, now: () => now });
  });

  afterEach(async () => {
    await store.close();
  });

  const put = (...signals: Signal[]) => store.upsert('signals', signals.map(signalRow));
  const ids = async () => (await feed.page({ status: 'all', limit: 100 })).rows.map((s) => `${s.signalId} ${s.status}`);

  it('answers from memory within the refresh interval, then takes in new signals and ends', async () => {
    await put(signal(1, { tokenId: 'tk_a', firedAt: T0 }));
    expect(await ids()).toEqual(['sig_000001 active']);
    expect(reads).toEqual([1, 1]);

    await put(signal(1, { tokenId: 'tk_a', firedAt: T0, ended: true }), signal(2, { tokenId: 'tk_a', firedAt: T0 + 2 * 60_000 }));
    now = 999;
    expect(await ids()).toEqual(['sig_000001 active']);
    expect(reads).toHaveLength(2);

    now = 1_000;
    expect(await ids()).toEqual(['sig_000002 active', 'sig_000001 ended']);
    expect(await feed.page({ status: 'all', limit: 100 })).toEqual(await signalFeed(store, { status: 'all', limit: 100 }));
  });

  it('reads again only the hours whose signals changed', async () => {
    await put(
      signal(1, { tokenId: 'tk_a', firedAt: T0 }),
      signal(2, { tokenId: 'tk_a', firedAt: T0 + 60_000 }),
      signal(3, { tokenId: 'tk_a', firedAt: T0 + HOUR }),
      signal(4, { tokenId: 'tk_a', firedAt: T0 + 2 * HOUR }),
    );
    await ids();
    reads = [];
    // Signal 2 ends: its fire hour is read again, with signal 1 that shares it; the other hours are not.
    await put(signal(2, { tokenId: 'tk_a', firedAt: T0 + 60_000, ended: true }));
    now = 1_000;
    expect(await ids()).toEqual(['sig_000004 active', 'sig_000003 active', 'sig_000002 ended', 'sig_000001 active']);
    expect(reads).toEqual([3, 2]);

    reads = [];
    now = 2_000;
    await ids();
    expect(reads).toEqual([3]);
  });

  it('takes in a signal projected late, fired before the newest it holds', async () => {
    await put(signal(1, { tokenId: 'tk_a', firedAt: T0 + 30 * 60_000 }), signal(2, { tokenId: 'tk_a', firedAt: T0 + 2 * HOUR }));
    await ids();
    await put(signal(3, { tokenId: 'tk_b', firedAt: T0 }), signal(4, { tokenId: 'tk_b', firedAt: T0 + 40 * 60_000 }));
    now = 1_000;
    expect(await ids()).toEqual(['sig_000002 active', 'sig_000004 active', 'sig_000001 active', 'sig_000003 active']);
  });

  it('tries again after a refresh that failed', async () => {
    await put(signal(1, { tokenId: 'tk_a', firedAt: T0 }));
    await store.close();
    await expect(ids()).rejects.toThrow();
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    await put(signal(5, { tokenId: 'tk_a', firedAt: T0 }));
    expect(await ids()).toEqual(['sig_000005 active']);
  });
});
