import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGNAL_RULES } from '../../processors/quant-engine/signals/rules.ts';
import { runBacktest, type BacktestResult } from '../../research/backtest/run.ts';
import { normaliseBacktestSpec } from '../../research/backtest/spec.ts';
import { storeHistory } from '../../research/history/store.ts';
import { embeddedStoreOfRows } from '../../research/history/testing/given.ts';
import { simulatedHistory } from '../../research/history/testing/simulated.ts';

/**
 * Backtests on the simulated world, whose planted structure the engine never sees: the rule
 * behind EARLY_ACCELERATION beats the baseline of all token-times, while a rule that selects
 * token-times regardless of what follows (every priced snapshot) does not. The seed was
 * fixed once and not tuned.
 */
const WORLD = { seed: 20_261_125, days: 5, tokens: 120, authors: 800, startMs: Date.UTC(2026, 0, 5) };

describe('backtests on the simulated world', () => {
  let store: Awaited<ReturnType<typeof embeddedStoreOfRows>>;
  beforeAll(async () => {
    const history = simulatedHistory(WORLD);
    store = await embeddedStoreOfRows(history.snapshots, history.tokens);
  }, 600_000);
  afterAll(() => store?.close());

  async function backtest(rules: { field: string; op: '>' | '>=' | '<' | '<='; value: number }[]): Promise<BacktestResult> {
    return runBacktest(normaliseBacktestSpec({ rules, horizon: '24h', cooldown: '6h' }), storeHistory(store));
  }

  it('finds the edge of EARLY_ACCELERATION over the baseline', async () => {
    const rule = SIGNAL_RULES.find((r) => r.type === 'EARLY_ACCELERATION')!;
    const r = await backtest(rule.conditions.map((c) => ({ field: c.field, op: c.op, value: c.value })));
    expect(r.leakage_checks.every((c) => c.ok)).toBe(true);
    expect(r.n).toBeGreaterThanOrEqual(30);
    expect(r.hit_rate_ci95!.low).toBeGreaterThan(r.baseline.hit_rate!);
    expect(r.excess.median_return!).toBeGreaterThan(0);
  });

  it('finds no edge in a rule that takes every priced token-time', async () => {
    const r = await backtest([{ field: 'price_usd', op: '>', value: 0 }]);
    expect(r.n).toBeGreaterThanOrEqual(30);
    expect(r.hit_rate_ci95!.low).toBeLessThanOrEqual(r.baseline.hit_rate!);
    expect(r.hit_rate_ci95!.high).toBeGreaterThanOrEqual(r.baseline.hit_rate!);
  });
});
