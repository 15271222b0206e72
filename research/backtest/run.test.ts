import { afterEach, describe, expect, it } from 'vitest';
import { storeHistory } from '../history/store.ts';
import { embeddedStore, HOUR, MIN, series, T0, tokenRow, type GivenSnapshot } from '../history/testing/given.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { leakageChecks } from './leakage.ts';
import { runBacktest, summariseEvents, type BacktestResult } from './run.ts';
import { normaliseBacktestSpec, type BacktestSpecInput } from './spec.ts';
import { distribution } from './summary.ts';

/** Given/expect: small hand-made histories, one rule of issue point 3 each. */

const HOT = { momentum: 90 };
const COLD = { momentum: 10 };
const RULE = [{ field: 'momentum', op: '>=', value: 50 }] as const;

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function backtest(snapshots: GivenSnapshot[], input: Partial<BacktestSpecInput> = {}, tokens: TokenRow[] = []): Promise<BacktestResult> {
  const store = await embeddedStore(snapshots, tokens);
  close = () => store.close();
  return runBacktest(normaliseBacktestSpec({ rules: [...RULE], horizon: '1h', ...input }), storeHistory(store));
}

const entries = (r: BacktestResult): string[] => r.events.map((e) => `${e.token_id}@${e.entry_at.slice(11, 16)}`);

describe('point in time', () => {
  it('enters where the rule holds on the snapshot at that time, never earlier on a later value', async () => {
    const r = await backtest(series('tk_a', T0, T0 + 3 * HOUR, 5 * MIN, (ts) => ({ fields: ts >= T0 + 10 * MIN ? HOT : COLD })));
    expect(entries(r)[0]).toBe('tk_a@00:10');
    expect(r.events[0].rule_values).toEqual({ momentum: 90 });
  });

  it('takes the entry price and the rule values from the same snapshot, and the exit from the path after it', async () => {
    const r = await backtest(series('tk_a', T0, T0 + 3 * HOUR, 5 * MIN, (_ts, i) => ({ price: 10 + i, fields: i === 2 ? HOT : COLD })));
    expect(r.events).toHaveLength(1);
    expect(r.events[0]).toMatchObject({ entry_at: '2026-01-01T00:10:00.000Z', entry_price: 12, exit_price: 24, exit_at: '2026-01-01T01:10:00.000Z' });
    expect(r.events[0].return).toBeCloseTo(1, 12);
    expect(r.events[0].time_to_peak_ms).toBe(HOUR);
  });

  it('leaves out entries whose horizon has not passed in the data, and counts them', async () => {
    const r = await backtest(series('tk_a', T0, T0 + 90 * MIN, 5 * MIN, () => ({ fields: HOT })));
    expect(entries(r)).toEqual(['tk_a@00:00']);
    expect(r.counts.unresolved).toBe(1);
    expect(r.warnings.map((w) => w.code)).toContain('unresolved_entries');
  });

  it('does not read past `now` even when the data goes on', async () => {
    const store = await embeddedStore(series('tk_a', T0, T0 + 5 * HOUR, 5 * MIN, () => ({ fields: HOT })));
    close = () => store.close();
    const spec = normaliseBacktestSpec({ rules: [...RULE], horizon: '1h' });
    const r = await runBacktest(spec, storeHistory(store), { now: T0 + 2 * HOUR });
    expect(entries(r)).toEqual(['tk_a@00:00', 'tk_a@01:00']);
    expect(r.counts.unresolved).toBe(1);
  });
});

describe('cooldown', () => {
  it('spaces the entries of one token by the cooldown, tokens independently', async () => {
    const r = await backtest([
      ...series('tk_a', T0, T0 + 4 * HOUR, 5 * MIN, () => ({ fields: HOT })),
      ...series('tk_b', T0 + 20 * MIN, T0 + 4 * HOUR, 5 * MIN, () => ({ fields: HOT })),
    ]);
    expect(entries(r)).toEqual(['tk_a@00:00', 'tk_b@00:20', 'tk_a@01:00', 'tk_b@01:20', 'tk_a@02:00', 'tk_b@02:20']);
    expect(r.warnings.map((w) => w.code)).not.toContain('overlapping_windows');
  });

  it('warns of overlapping windows when the cooldown is shorter than the horizon', async () => {
    const r = await backtest(series('tk_a', T0, T0 + 2 * HOUR, 5 * MIN, () => ({ fields: HOT })), { cooldown: '15m' });
    // Data ends at 01:55: entries from 01:00 on are unresolved.
    expect(entries(r)).toEqual(['tk_a@00:00', 'tk_a@00:15', 'tk_a@00:30', 'tk_a@00:45']);
    expect(r.counts.unresolved).toBe(4);
    expect(r.warnings.map((w) => w.code)).toContain('overlapping_windows');
  });
});

describe('dead tokens', () => {
  // Entered at 00:00 at 10; its pool is pulled at 00:30 (liquidity 1% of entry), the price falls to 1.
  const rugged = series('tk_rug', T0, T0 + 2 * HOUR, 5 * MIN, (ts) =>
    ts < T0 + 30 * MIN ? { price: 10, liquidity: 100_000, fields: ts === T0 ? HOT : COLD } : { price: 1, liquidity: 1_000, fields: COLD },
  );
  const healthy = series('tk_ok', T0, T0 + 2 * HOUR, 5 * MIN, (ts) => ({ price: ts === T0 ? 10 : 11, fields: ts === T0 ? HOT : COLD }));

  it('values a token that died at its last price by default', async () => {
    const r = await backtest([...rugged, ...healthy]);
    expect(r.events.map((e) => [e.token_id, e.died, e.return])).toEqual([
      ['tk_ok', false, expect.closeTo(0.1, 12)],
      ['tk_rug', true, expect.closeTo(-0.9, 12)],
    ]);
    expect(r.counts.dead).toBe(1);
  });

  it('values it as a total loss under total_loss', async () => {
    const r = await backtest([...rugged, ...healthy], { deadTokenPolicy: 'total_loss' });
    expect(r.events.find((e) => e.token_id === 'tk_rug')).toMatchObject({ died: true, return: -1, max_drawdown: -1 });
  });

  it('leaves it out under exclude, counted and warned of', async () => {
    const r = await backtest([...rugged, ...healthy], { deadTokenPolicy: 'exclude' });
    expect(r.events.map((e) => e.token_id)).toEqual(['tk_ok']);
    expect(r.counts).toMatchObject({ dead: 1, dead_excluded: 1 });
    expect(r.warnings.map((w) => w.code)).toContain('dead_tokens_excluded');
  });

  it('counts a token without market data in the window, or delisted by then, as dead', async () => {
    const silent = [{ token: 'tk_silent', ts: T0, price: 5, fields: HOT }, { token: 'tk_silent', ts: T0 + 3 * HOUR, price: 5, fields: COLD }];
    const delisted = series('tk_delisted', T0, T0 + 2 * HOUR, 5 * MIN, (ts) => ({ price: 2, fields: ts === T0 ? HOT : COLD }));
    const r = await backtest([...silent, ...delisted, ...healthy], {}, [tokenRow('tk_delisted', 'dead', T0 + 40 * MIN)]);
    expect(r.events.map((e) => [e.token_id, e.died, e.return])).toEqual([
      ['tk_delisted', true, 0],
      ['tk_ok', false, expect.closeTo(0.1, 12)],
      ['tk_silent', true, 0],
    ]);
  });
});

describe('universe', () => {
  it('decides membership on the snapshot at entry, keeping tokens that died later', async () => {
    const r = await backtest(
      [
        // Liquid at entry, rugged later: in the universe (no survivorship).
        ...series('tk_later_dead', T0, T0 + 2 * HOUR, 5 * MIN, (ts) => ({ liquidity: ts < T0 + 30 * MIN ? 80_000 : 10, fields: ts === T0 ? HOT : COLD })),
        // Illiquid at its only firing, liquid afterwards: out.
        ...series('tk_thin', T0, T0 + 2 * HOUR, 5 * MIN, (ts) => ({ liquidity: ts === T0 ? 5_000 : 90_000, fields: ts === T0 ? HOT : COLD })),
        // Another chain: out.
        ...series('tk_base', T0, T0 + 2 * HOUR, 5 * MIN, (ts) => ({ chain: 'base', fields: ts === T0 ? HOT : COLD })),
      ],
      { universe: { chains: ['solana'], minLiquidityUsd: 50_000 } },
    );
    expect(r.events.map((e) => [e.token_id, e.died])).toEqual([['tk_later_dead', true]]);
    expect(r.leakage_checks.find((c) => c.check === 'universe_as_of_entry')).toMatchObject({ checked: 1, passed: 1, ok: true });
  });
});

describe('result', () => {
  const world = [
    ...series('tk_a', T0, T0 + 12 * HOUR, 5 * MIN, (_ts, i) => ({ price: 1 + 0.3 * Math.sin(i / 5), fields: { momentum: (i * 37) % 100 } })),
    ...series('tk_b', T0, T0 + 12 * HOUR, 5 * MIN, (_ts, i) => ({ price: 2 + 0.5 * Math.cos(i / 7), fields: { momentum: (i * 53) % 100 } })),
  ];

  it('states a summary that recomputes from its own events', async () => {
    const r = await backtest(world, { cooldown: '15m' });
    expect(r.n).toBe(r.events.length);
    expect(r.n).toBeGreaterThan(10);
    const { n, hits, hit_rate, hit_rate_ci95, median_return, mean_return, trimmed_mean_return, median_max_drawdown, median_time_to_peak_ms } = r;
    expect(summariseEvents(r.events)).toEqual({ n, hits, hit_rate, hit_rate_ci95, median_return, mean_return, trimmed_mean_return, median_max_drawdown, median_time_to_peak_ms });
    expect(distribution(r.events.map((e) => e.return))).toEqual(r.return_distribution);
    expect(r.best[0].return).toBe(Math.max(...r.events.map((e) => e.return)));
    expect(r.worst[0].return).toBe(Math.min(...r.events.map((e) => e.return)));
  });

  it('passes every leakage check on every entry', async () => {
    const r = await backtest(world, { cooldown: '15m' });
    const taken = r.n + r.counts.unresolved + r.counts.dead_excluded;
    expect(r.leakage_checks.map((c) => c.check)).toEqual([
      'inputs_at_or_before_entry',
      'outcomes_after_entry',
      'cooldown_spacing',
      'universe_as_of_entry',
      'rule_fields_at_entry',
    ]);
    for (const c of r.leakage_checks) expect(c).toMatchObject({ ok: true, passed: c.checked });
    expect(r.leakage_checks.find((c) => c.check === 'cooldown_spacing')!.checked).toBe(taken);
  });

  it('compares with a baseline of the same universe and window', async () => {
    const r = await backtest(world);
    expect(r.baseline.n).toBeGreaterThan(0);
    expect(r.excess.hit_rate).toBeCloseTo(r.hit_rate! - r.baseline.hit_rate!, 12);
    expect(r.model_versions.backtest).toBe('backtest@1');
    expect(r.disclaimer).toMatch(/not financial advice/);
  });

  it('warns of a small sample', async () => {
    const r = await backtest(series('tk_a', T0, T0 + 3 * HOUR, 5 * MIN, () => ({ fields: HOT })));
    expect(r.warnings.map((w) => w.code)).toContain('small_n');
  });
});

describe('leakage checks', () => {
  it('fail an outcome that read a price from before its entry, and entries closer than the cooldown', () => {
    const candidate = (ts: number) => ({ tokenId: 'tk_a', ts, chain: 'solana', priceUsd: 1, liquidityUsd: 1, values: { momentum: 90 } });
    const path = (ts: number, firstTs: number) => ({
      tokenId: 'tk_a', ts, entryPrice: 1, entryLiquidity: 1, ticks: 2, firstTs, lastTs: ts + HOUR, lastPrice: 1, minPrice: 1, maxPrice: 1, peakTs: firstTs, minLiquidity: 1, deadSince: null,
    });
    const checks = leakageChecks({
      entries: [
        { candidate: candidate(T0), path: path(T0, T0), died: false },
        { candidate: candidate(T0 + 30 * MIN), path: path(T0 + 30 * MIN, T0 + 35 * MIN), died: false },
      ],
      rules: [...RULE],
      universe: {},
      horizonMs: HOUR,
      cooldownMs: HOUR,
      dataEnd: T0 + 5 * HOUR,
      entryTimes: [T0, T0 + 30 * MIN],
    });
    expect(checks.find((c) => c.check === 'outcomes_after_entry')).toMatchObject({ checked: 2, passed: 1, ok: false });
    expect(checks.find((c) => c.check === 'cooldown_spacing')).toMatchObject({ checked: 2, passed: 1, ok: false });
  });
});
