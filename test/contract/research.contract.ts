import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { runBacktest } from '../../research/backtest/run.ts';
import { normaliseBacktestSpec, type BacktestSpecInput } from '../../research/backtest/spec.ts';
import { eventStudyResult, refreshEventStudies } from '../../research/event-studies/compute.ts';
import { EVENT_STUDIES } from '../../research/event-studies/studies.ts';
import { storeHistory } from '../../research/history/store.ts';
import { embeddedStore, HOUR, snapshotRow } from '../../research/history/testing/given.ts';
import { smallWorld, WORLD_END } from '../../research/history/testing/world.ts';

/**
 * Research over a real store: the same backtests and event studies over the same rows give
 * the same result on the store under test as on an embedded DuckDB reference, and the
 * figures that depend on the SQL (rule filter, path aggregation, dead tokens, baseline) are
 * the ones the hand-made world implies.
 */
export type ResearchStoreFactory = () => Promise<{ store: AnalyticalStore<ProjectionTables>; cleanup(): Promise<void> }>;

const SPECS: Record<string, BacktestSpecInput> = {
  'momentum 1h': { rules: [{ field: 'momentum', op: '>=', value: 90 }], horizon: '1h' },
  'momentum 6h, 1h cooldown, total loss': { rules: [{ field: 'momentum', op: '>=', value: 80 }], horizon: '6h', cooldown: '1h', deadTokenPolicy: 'total_loss' },
  'two rules 24h, exclude, solana with liquidity': {
    rules: [
      { field: 'momentum', op: '>', value: 50 },
      { field: 'new_author_share_1h', op: '>=', value: 0.5 },
    ],
    horizon: '24h',
    deadTokenPolicy: 'exclude',
    universe: { chains: ['solana'], minLiquidityUsd: 60_000 },
  },
};

export function describeResearchContract(name: string, open: ResearchStoreFactory): void {
  describe(`research over ${name}`, () => {
    const world = smallWorld();
    let target: Awaited<ReturnType<ResearchStoreFactory>>;
    let reference: Awaited<ReturnType<typeof embeddedStore>>;

    beforeEach(async () => {
      target = await open();
      await target.store.upsert('snapshot_history', world.snapshots.map(snapshotRow));
      await target.store.upsert('tokens', world.tokens);
      reference = await embeddedStore(world.snapshots, world.tokens);
    });

    afterEach(async () => {
      await target.cleanup();
      await reference.close();
    });

    for (const [label, input] of Object.entries(SPECS)) {
      it(`gives the reference's backtest result: ${label}`, async () => {
        const spec = normaliseBacktestSpec(input);
        const got = await runBacktest(spec, storeHistory(target.store));
        const want = await runBacktest(spec, storeHistory(reference));
        expect(got.n).toBeGreaterThan(0);
        expect(got.leakage_checks.every((c) => c.ok)).toBe(true);
        expect(got).toEqual(want);
      });
    }

    it('values the rugged and the delisted token as dead, and keeps them in the universe', async () => {
      const spec = normaliseBacktestSpec({ rules: [{ field: 'momentum', op: '>=', value: 0 }], horizon: '6h', deadTokenPolicy: 'total_loss' });
      const result = await runBacktest(spec, storeHistory(target.store));
      const died = new Set(result.events.filter((e) => e.died).map((e) => e.token_id));
      expect(died).toEqual(new Set(['tk_rug', 'tk_gone']));
      expect(result.events.filter((e) => e.died).every((e) => e.return === -1)).toBe(true);
      expect(result.baseline.n).toBeGreaterThan(0);
    });

    it('gives the reference event studies, with the change measure of crowding-spike', async () => {
      const asOf = WORLD_END - HOUR;
      const got = await refreshEventStudies(null, storeHistory(target.store), asOf);
      const want = await refreshEventStudies(null, storeHistory(reference), asOf);
      for (const study of EVENT_STUDIES) expect(eventStudyResult(got, study)).toEqual(eventStudyResult(want, study));
      expect(got.studies['crowding-spike'].events).toBeGreaterThan(0);
    });
  });
}
