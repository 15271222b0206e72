import { DIED_LIQUIDITY_FRACTION } from '../../processors/quant-engine/outcomes/outcomes.ts';
import type { PricePath } from '../history/source.ts';
import type { DeadTokenPolicy } from './spec.ts';

/**
 * The outcome of one entry from its price path, as the outcomes processor defines it: the
 * return to the last price seen by the horizon, the drawdown to the lowest, the time to the
 * highest. Died: no priced snapshot in the window, liquidity below DIED_LIQUIDITY_FRACTION of
 * the entry's, or the token marked dead by the window's end.
 */

export interface EntryOutcome {
  /** Null: excluded (a dead token under the `exclude` policy). */
  forwardReturn: number;
  maxDrawdown: number;
  timeToPeakMs: number;
  exitPrice: number | null;
  died: boolean;
}

export function hasDied(path: PricePath, horizonMs: number): boolean {
  if (path.ticks === 0) return true;
  if (path.deadSince !== null && path.deadSince <= path.ts + horizonMs) return true;
  const entryLiquidity = path.entryLiquidity;
  return entryLiquidity !== null && entryLiquidity > 0 && path.minLiquidity !== null && path.minLiquidity < DIED_LIQUIDITY_FRACTION * entryLiquidity;
}

/** The entry's outcome under the policy; null when the policy excludes it. */
export function outcomeOf(path: PricePath, horizonMs: number, policy: DeadTokenPolicy): EntryOutcome | null {
  const died = hasDied(path, horizonMs);
  if (died && policy === 'exclude') return null;
  if (died && policy === 'total_loss') return { forwardReturn: -1, maxDrawdown: -1, timeToPeakMs: 0, exitPrice: 0, died };
  const entry = path.entryPrice;
  // last_price: a token with no price after entry is valued at the last price known, the entry's.
  const exit = path.lastPrice ?? entry;
  const low = path.minPrice ?? entry;
  const high = path.maxPrice ?? entry;
  return {
    forwardReturn: exit / entry - 1,
    maxDrawdown: Math.min(0, low / entry - 1),
    timeToPeakMs: high > entry && path.peakTs !== null ? path.peakTs - path.ts : 0,
    exitPrice: path.lastPrice,
    died,
  };
}
