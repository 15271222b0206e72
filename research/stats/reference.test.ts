import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { outcomeOf } from '../backtest/outcome.ts';
import { storeHistory } from '../history/store.ts';
import { embeddedStore, T0 } from '../history/testing/given.ts';
import { wilsonInterval } from '../../processors/stats/binomial.ts';
import { histogram, mean, median, quantile, sampleStdev, trimmedMean } from '../../processors/stats/describe.ts';

/** Expected values computed independently (numpy, scipy); how is told in the fixture's note. */
interface Reference {
  vectors: {
    name: string;
    values: number[];
    mean: number;
    median: number;
    quantiles: { q: number; value: number }[];
    trimmed_mean_10: number;
    sample_stdev: number | null;
    histogram_5: { counts: number[]; edges: number[] } | null;
  }[];
  wilson: { successes: number; trials: number; low: number; high: number }[];
  paths: { name: string; entry_price: number; prices: number[]; step_ms: number; forward_return: number; max_drawdown: number; time_to_peak_ms: number }[];
}

const reference = JSON.parse(readFileSync(new URL('./fixtures/reference.json', import.meta.url), 'utf8')) as Reference;
const DIGITS = 12;

describe('statistics against independently computed values', () => {
  for (const v of reference.vectors) {
    it(`describes ${v.name}`, () => {
      expect(mean(v.values)).toBeCloseTo(v.mean, DIGITS);
      expect(median(v.values)).toBeCloseTo(v.median, DIGITS);
      for (const { q, value } of v.quantiles) expect(quantile(v.values, q)).toBeCloseTo(value, DIGITS);
      expect(trimmedMean(v.values, 0.1)).toBeCloseTo(v.trimmed_mean_10, DIGITS);
      if (v.sample_stdev === null) expect(sampleStdev(v.values)).toBeNull();
      else expect(sampleStdev(v.values)).toBeCloseTo(v.sample_stdev, DIGITS);
      if (v.histogram_5 !== null) {
        const bins = histogram(v.values, 5);
        expect(bins.map((b) => b.count)).toEqual(v.histogram_5.counts);
        bins.forEach((b, i) => {
          expect(b.from).toBeCloseTo(v.histogram_5!.edges[i], DIGITS);
          expect(b.to).toBeCloseTo(v.histogram_5!.edges[i + 1], DIGITS);
        });
      }
    });
  }

  it('gives the Wilson interval of every reference proportion', () => {
    for (const w of reference.wilson) {
      const got = wilsonInterval(w.successes, w.trials)!;
      expect(got.low).toBeCloseTo(w.low, DIGITS);
      expect(got.high).toBeCloseTo(w.high, DIGITS);
    }
  });

  it('gives the return, max drawdown and time to peak of every reference price path, read through the store', async () => {
    const snapshots = reference.paths.flatMap((p, k) => [
      { token: `tk_${k}`, ts: T0, price: p.entry_price },
      ...p.prices.map((price, i) => ({ token: `tk_${k}`, ts: T0 + (i + 1) * p.step_ms, price })),
    ]);
    const store = await embeddedStore(snapshots);
    try {
      const horizonMs = 3_600_000;
      const paths = await storeHistory(store).pricePaths(
        reference.paths.map((p, k) => ({ tokenId: `tk_${k}`, ts: T0, entryPrice: p.entry_price, entryLiquidity: 100_000 })),
        horizonMs,
      );
      reference.paths.forEach((p, k) => {
        const o = outcomeOf(paths[k], horizonMs, 'last_price')!;
        expect(o.forwardReturn, p.name).toBeCloseTo(p.forward_return, DIGITS);
        expect(o.maxDrawdown, p.name).toBeCloseTo(p.max_drawdown, DIGITS);
        expect(o.timeToPeakMs, p.name).toBe(p.time_to_peak_ms);
      });
    } finally {
      await store.close();
    }
  });
});
