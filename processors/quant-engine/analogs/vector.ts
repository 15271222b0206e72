import type { ScoredSnapshot } from '../contracts.ts';

/**
 * The analog vector of a snapshot (model analog-v1.0): seven components, each first mapped
 * to a scale on which differences mean roughly the same everywhere, then standardised.
 *
 *   0 momentum            score 0–100, as is
 *   1 crowding            score 0–100, as is
 *   2 early_quality       score 0–100, as is
 *   3 narrative_velocity  score 0–100, as is
 *   4 price momentum      ln(1 + price_change_1h): a log return, so +100% and −50% are equally far from 0
 *   5 volume acceleration ln(1 + volume_acceleration): the ratio is ≥ 0 with a long right tail
 *   6 liquidity           log10(liquidity_usd), liquidity below $1 counted as $1: pools span orders of magnitude
 *
 * A null or non-finite input is missing (NaN in the raw vector). Standardisation: z-scores
 * with the mean and population standard deviation of each component over the non-missing
 * values of all candidates, frozen at each index rebuild (a standard deviation of 0, or no
 * values, counts as 1). A missing component is imputed to the mean, i.e. z = 0; the share of
 * imputed components lowers the confidence of a summary. Standardised values are held as
 * float32, and distances are Euclidean over them, accumulated in float64 in component order.
 */

export const ANALOG_DIMS = 7;
export const ANALOG_COMPONENTS = [
  'momentum',
  'crowding',
  'early_quality',
  'narrative_velocity',
  'price_momentum',
  'volume_acceleration',
  'liquidity',
] as const;
export type AnalogComponent = (typeof ANALOG_COMPONENTS)[number];

/** The untransformed inputs of the vector, as a snapshot or a store row carries them. */
export interface AnalogInputs {
  momentum: number | null;
  crowding: number | null;
  earlyQuality: number | null;
  narrativeVelocity: number | null;
  /** price_change_1h, a fraction. */
  priceChange1h: number | null;
  volumeAcceleration: number | null;
  liquidityUsd: number | null;
}

/** Floor of 1 + price change before the log: a price of exactly 0 is a total loss, not −∞. */
const MIN_PRICE_RATIO = 1e-6;

/** What the vector is made of: a scored snapshot's scores and features, as a snapshot or a signal record carries them. */
export type AnalogSource = { scores: Partial<Record<keyof ScoredSnapshot['scores'], number | null>>; features: ScoredSnapshot['features'] };

export function analogInputs(scored: AnalogSource): AnalogInputs {
  const f = scored.features;
  return {
    momentum: scored.scores.momentum ?? null,
    crowding: scored.scores.crowding ?? null,
    earlyQuality: scored.scores.early_quality ?? null,
    narrativeVelocity: scored.scores.narrative_velocity ?? null,
    priceChange1h: f.price_change_1h ?? null,
    volumeAcceleration: f.volume_acceleration ?? null,
    liquidityUsd: f.liquidity_usd ?? null,
  };
}

function finite(x: number | null): number {
  return x !== null && Number.isFinite(x) ? x : NaN;
}

/** Writes the transformed, unstandardised components at `out[offset..offset+7)`; NaN where missing. */
export function writeRawVector(inputs: AnalogInputs, out: Float64Array | number[], offset: number): void {
  const price = finite(inputs.priceChange1h);
  const volume = finite(inputs.volumeAcceleration);
  const liquidity = finite(inputs.liquidityUsd);
  out[offset] = finite(inputs.momentum);
  out[offset + 1] = finite(inputs.crowding);
  out[offset + 2] = finite(inputs.earlyQuality);
  out[offset + 3] = finite(inputs.narrativeVelocity);
  out[offset + 4] = Math.log(Math.max(1 + price, MIN_PRICE_RATIO)); // NaN stays NaN
  out[offset + 5] = volume < 0 ? NaN : Math.log1p(volume);
  out[offset + 6] = Math.log10(Math.max(liquidity, 1));
}

/** Frozen standardisation: per component mean and standard deviation. */
export interface Standardisation {
  mean: Float64Array;
  std: Float64Array;
}

export function identityStandardisation(): Standardisation {
  return { mean: new Float64Array(ANALOG_DIMS), std: new Float64Array(ANALOG_DIMS).fill(1) };
}

/** Mean and population stdev of the non-missing values of the first `count` raw vectors. */
export function fitStandardisation(raw: Float64Array, count: number): Standardisation {
  const s = identityStandardisation();
  for (let d = 0; d < ANALOG_DIMS; d++) {
    let n = 0;
    let sum = 0;
    for (let i = 0; i < count; i++) {
      const x = raw[i * ANALOG_DIMS + d];
      if (x === x) {
        n++;
        sum += x;
      }
    }
    if (n === 0) continue;
    const mean = sum / n;
    let ss = 0; // two passes: the one-pass sum of squares loses the variance of large values (log liquidity ~ 6)
    for (let i = 0; i < count; i++) {
      const x = raw[i * ANALOG_DIMS + d];
      if (x === x) ss += (x - mean) * (x - mean);
    }
    const std = Math.sqrt(ss / n);
    s.mean[d] = mean;
    s.std[d] = std > 1e-12 ? std : 1;
  }
  return s;
}

/** Standardises one raw vector into `out[outOffset..+7)` as float32; returns how many components were imputed. */
export function standardiseInto(
  s: Standardisation,
  raw: ArrayLike<number>,
  rawOffset: number,
  out: Float32Array | Float64Array,
  outOffset: number,
): number {
  let imputed = 0;
  for (let d = 0; d < ANALOG_DIMS; d++) {
    const x = raw[rawOffset + d];
    if (x === x) out[outOffset + d] = Math.fround((x - s.mean[d]) / s.std[d]);
    else {
      out[outOffset + d] = 0;
      imputed++;
    }
  }
  return imputed;
}

/** How many components of a raw vector are missing. */
export function missingCount(raw: ArrayLike<number>, offset: number): number {
  let n = 0;
  for (let d = 0; d < ANALOG_DIMS; d++) if (raw[offset + d] !== raw[offset + d]) n++;
  return n;
}
