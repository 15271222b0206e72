// Shared by author metrics (processors) and backtests (research): in processors/, the lower of the two.

/** z of a two-sided 95% normal interval. */
export const WILSON_Z_95 = 1.959963984540054;

/** 95% (by default) Wilson score interval of a binomial proportion; null without trials. */
export function wilsonInterval(successes: number, trials: number, z = WILSON_Z_95): { low: number; high: number } | null {
  if (trials <= 0) return null;
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const centre = (p + z2 / (2 * trials)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  // At p = 0 or 1 the bound is exactly 0 or 1; floating point would land just beside it.
  return { low: successes === 0 ? 0 : centre - half, high: successes === trials ? 1 : centre + half };
}
