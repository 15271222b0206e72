/** Spec 6.4: when a failed delivery is tried again, and when a webhook gives up. */

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/** Delays after the 1st, 2nd, … failed attempt; after the last one the event is given up. */
export const RETRY_DELAYS_MS = [30 * S, 2 * M, 10 * M, 30 * M, 2 * H, 6 * H] as const;

/** Consecutive failed deliveries (tests excluded) that disable a webhook. */
export const AUTO_DISABLE_AFTER = 20;

/** When attempt `attempt` (1-based) failed at `at`, the next attempt's time; null when out of retries. */
export function nextRetryAt(attempt: number, at: number): number | null {
  const delay = RETRY_DELAYS_MS[attempt - 1];
  return delay === undefined ? null : at + delay;
}
