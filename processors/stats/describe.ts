/**
 * Descriptive statistics of a sample, shared by author metrics, backtests and event studies.
 * They live in processors/, the lowest layer that uses them; research imports them from here.
 * Quantiles interpolate linearly between order statistics (numpy's default 'linear' method,
 * Hyndman and Fan type 7), so figures can be checked against numpy and scipy.
 */

function sortedCopy(values: readonly number[]): number[] {
  // A typed array sorts numerically, without a comparator call per pair.
  return Array.from(Float64Array.from(values).sort());
}

export function mean(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

export function median(values: readonly number[]): number | null {
  return quantile(values, 0.5);
}

/** The q-quantile (0 ≤ q ≤ 1) by linear interpolation between order statistics; null when empty. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  return quantileOfSorted(sortedCopy(values), q);
}

export function quantileOfSorted(sorted: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile ${q} is outside [0, 1]`);
  const position = q * (sorted.length - 1);
  const below = Math.floor(position);
  const above = Math.min(below + 1, sorted.length - 1);
  const weight = position - below;
  return weight === 0 ? sorted[below] : sorted[below] + (sorted[above] - sorted[below]) * weight;
}

/**
 * Mean after cutting `proportion` of the values from each end, the count cut rounded down
 * on each side (scipy.stats.trim_mean's convention).
 */
export function trimmedMean(values: readonly number[], proportion: number): number | null {
  if (values.length === 0) return null;
  if (!(proportion >= 0 && proportion < 0.5)) throw new RangeError(`trim proportion ${proportion} is outside [0, 0.5)`);
  const sorted = sortedCopy(values);
  const cut = Math.floor(proportion * sorted.length);
  return mean(sorted.slice(cut, sorted.length - cut));
}

/** Sample standard deviation (n − 1); null below two values. */
export function sampleStdev(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const m = mean(values)!;
  let squares = 0;
  for (const v of values) squares += (v - m) ** 2;
  return Math.sqrt(squares / (values.length - 1));
}

export interface HistogramBin {
  /** Inclusive lower edge. */
  from: number;
  /** Exclusive upper edge, except the last bin, which includes it. */
  to: number;
  count: number;
}

/**
 * Counts per bin of `bins` equal-width bins between the sample's min and max (numpy.histogram's
 * edges and right-closed last bin). A sample of one repeated value gets one bin.
 */
export function histogram(values: readonly number[], bins: number): HistogramBin[] {
  if (values.length === 0) return [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (lo === hi) return [{ from: lo, to: hi, count: values.length }];
  const width = (hi - lo) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) counts[Math.min(bins - 1, Math.floor((v - lo) / width))]++;
  return counts.map((count, i) => ({ from: lo + i * width, to: i === bins - 1 ? hi : lo + (i + 1) * width, count }));
}
