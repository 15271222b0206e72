import { wilsonInterval } from '../../processors/stats/binomial.ts';
import { histogram, mean, quantileOfSorted, trimmedMean, type HistogramBin } from '../../processors/stats/describe.ts';

/** Summary statistics of a set of outcomes, in the result's wire form (snake_case, fractions). */

export const TRIM_PROPORTION = 0.1;
export const DISTRIBUTION_QUANTILES = [0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95] as const;
export const HISTOGRAM_BINS = 20;

/** A hit is an entry whose forward return is positive. */
export function isHit(forwardReturn: number): boolean {
  return forwardReturn > 0;
}

export interface Distribution {
  quantiles: { q: number; value: number }[];
  histogram: HistogramBin[];
}

export interface OutcomeSummary {
  n: number;
  hits: number;
  hit_rate: number | null;
  hit_rate_ci95: { low: number; high: number } | null;
  median_return: number | null;
  mean_return: number | null;
  trimmed_mean_return: number | null;
  median_max_drawdown: number | null;
  median_time_to_peak_ms: number | null;
}

export interface SummaryInput {
  forwardReturn: number;
  maxDrawdown: number;
  timeToPeakMs: number;
}

function sorted(values: readonly number[]): number[] {
  return Array.from(Float64Array.from(values).sort());
}

export function summarise(outcomes: readonly SummaryInput[]): OutcomeSummary {
  const n = outcomes.length;
  const returns = outcomes.map((o) => o.forwardReturn);
  const hits = returns.filter(isHit).length;
  const medianOf = (values: number[]): number | null => (values.length === 0 ? null : quantileOfSorted(sorted(values), 0.5));
  return {
    n,
    hits,
    hit_rate: n === 0 ? null : hits / n,
    hit_rate_ci95: wilsonInterval(hits, n),
    median_return: medianOf(returns),
    mean_return: mean(returns),
    trimmed_mean_return: trimmedMean(returns, TRIM_PROPORTION),
    median_max_drawdown: medianOf(outcomes.map((o) => o.maxDrawdown)),
    median_time_to_peak_ms: medianOf(outcomes.map((o) => o.timeToPeakMs)),
  };
}

export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { quantiles: [], histogram: [] };
  const s = sorted(values);
  return {
    quantiles: DISTRIBUTION_QUANTILES.map((q) => ({ q, value: quantileOfSorted(s, q) })),
    histogram: histogram(s, HISTOGRAM_BINS),
  };
}
