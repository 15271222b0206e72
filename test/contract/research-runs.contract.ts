import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { splitEvents } from '../../projections/read-models/backtest-events.ts';
import { activeBacktestsOfKey, backtestsOfKey, eventStudyResults, getBacktest } from '../../projections/read-models/research.ts';
import type { BacktestRequestRow, BacktestRunRow } from '../../projections/tables/research.ts';
import type { ProjectionTables } from '../../projections/tables.ts';

/**
 * The read models of backtest runs and event studies on a store: the latest version of a
 * request and of a run wins, a key's runs page newest first with a cursor, only queued and
 * running ones count against the plan's limit, a done result's events in parts join back,
 * and each study serves its newest result.
 */
export type StoreFactory = () => Promise<{ store: AnalyticalStore<ProjectionTables>; cleanup(): Promise<void> }>;

const T = Date.UTC(2026, 2, 1);
const id = (n: number) => `btr_${String(n).padStart(24, '0')}`;

function request(n: number, key: string, version = 1): BacktestRequestRow {
  return {
    run_id: id(n), version, ts: T + n, key_id: key, team_id: null, dataset: 'live', plan: 'pro', name: `run ${n}`,
    spec: '{"rules":[]}', created_at: T + n * 1000, cancel_requested_at: version > 1 ? T + n : null,
  };
}

function run(n: number, seq: number, status: string, result: string | null = null): BacktestRunRow {
  return {
    run_id: id(n), seq, ts: T + seq, status, attempt: 1, scanned: seq * 10, total: 30, as_of: T, started_at: T,
    finished_at: status === 'running' ? null : T + seq, reason: null, result,
  };
}

export function describeResearchRunsContract(name: string, open: StoreFactory): void {
  describe(`backtest runs and event studies read models on ${name}`, () => {
    let store: AnalyticalStore<ProjectionTables>;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await open());
      await store.upsert('backtest_requests', [request(1, 'key_a'), request(2, 'key_a'), request(3, 'key_a'), request(4, 'key_b')]);
      await store.upsert('backtest_requests', [request(2, 'key_a', 2)]);
      await store.upsert('backtest_runs', [run(1, 1, 'running'), run(2, 1, 'running'), run(1, 2, 'running')]);
      await store.upsert('backtest_runs', [run(1, 3, 'done', '{"n":3}'), run(2, 2, 'canceled')]);
      await store.upsert('event_studies', [
        { slug: 'cooling', as_of: T, ts: T, result: '{"as_of":"old"}' },
        { slug: 'cooling', as_of: T + 3_600_000, ts: T + 3_600_000, result: '{"as_of":"new"}' },
        { slug: 'velocity-3x', as_of: T, ts: T, result: '{}' },
      ]);
    });

    afterEach(async () => {
      await cleanup();
    });

    it('gives a run with its latest request version and latest state; null for an unknown id', async () => {
      const one = await getBacktest(store, id(1));
      expect(one?.request).toMatchObject({ run_id: id(1), key_id: 'key_a', version: 1, cancel_requested_at: null });
      expect(one?.run).toMatchObject({ seq: 3, status: 'done', result: '{"n":3}', finished_at: T + 3 });
      expect((await getBacktest(store, id(2)))?.request.cancel_requested_at).toBe(T + 2);
      expect((await getBacktest(store, id(3)))?.run).toBeNull();
      expect(await getBacktest(store, id(9))).toBeNull();
    });

    it("pages a key's runs newest first", async () => {
      const first = await backtestsOfKey(store, 'key_a', 2);
      expect(first.rows.map((r) => r.request.run_id)).toEqual([id(3), id(2)]);
      expect(first.hasMore).toBe(true);
      const second = await backtestsOfKey(store, 'key_a', 2, first.nextCursor!);
      expect(second.rows.map((r) => [r.request.run_id, r.run?.status])).toEqual([[id(1), 'done']]);
      expect(second.hasMore).toBe(false);
      expect(second.nextCursor).toBeNull();
      await expect(backtestsOfKey(store, 'key_b', 2, first.nextCursor!)).rejects.toThrow(/cursor/);
    });

    it('counts only queued and running runs against the limit', async () => {
      expect(await activeBacktestsOfKey(store, 'key_a')).toBe(1);
      expect(await activeBacktestsOfKey(store, 'key_b')).toBe(1);
      expect(await activeBacktestsOfKey(store, 'key_c')).toBe(0);
    });

    it('joins a done result with its events in parts, and shows it running until every part is stored', async () => {
      const { rest, parts } = splitEvents({ n: 3, events: [{ token_id: 'tk_a' }, { token_id: 'tk_b' }, { token_id: 'tk_c' }] }, 20);
      expect(parts).toHaveLength(3);
      const part = (i: number, ts = T + 5) => ({ run_id: id(3), part: i, parts: parts.length, ts, events: parts[i] });
      await store.upsert('backtest_runs', [run(3, 5, 'done', rest)]);
      // The last part is twice: as a rerun after a restart writes it again.
      await store.upsert('backtest_events', [part(0), part(2)]);
      await store.upsert('backtest_events', [part(2, T + 6)]);
      expect((await getBacktest(store, id(3)))?.run).toMatchObject({ status: 'running', result: null, finished_at: null });
      await store.upsert('backtest_events', [part(1)]);
      const done = (await getBacktest(store, id(3)))?.run;
      expect(done?.status).toBe('done');
      expect(JSON.parse(done!.result!)).toEqual({ n: 3, events: [{ token_id: 'tk_a' }, { token_id: 'tk_b' }, { token_id: 'tk_c' }] });
      expect((await backtestsOfKey(store, 'key_a', 1)).rows[0].run?.result).toBe(done!.result);
    });

    it("serves each study's newest result", async () => {
      const rows = await eventStudyResults(store);
      expect(rows.map((r) => [r.slug, r.result])).toEqual([
        ['cooling', '{"as_of":"new"}'],
        ['velocity-3x', '{}'],
      ]);
    });
  });
}
