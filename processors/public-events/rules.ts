import type { z } from 'zod';
import { SCORE_NAMES } from '../../schemas/records/primitives.ts';
import type { QuantScoresSchema } from '../../schemas/records/quant-scores.ts';

/**
 * When a token's scores or a narrative's attention are worth telling subscribers about.
 * Both compare with what was last published, not with the previous snapshot, so a slow
 * drift is announced once it adds up instead of never.
 */

export type Scores = z.infer<typeof QuantScoresSchema>;

/** Spec 6.1: a score that moved by at least this many points makes a token.score.updated. */
export const SCORE_MOVE_POINTS = 3;

/** A score moved by SCORE_MOVE_POINTS or more, or became available or unavailable. */
export function scoresMoved(previous: Scores, current: Scores): boolean {
  return SCORE_NAMES.some((name) => {
    const a = previous[name];
    const b = current[name];
    if (a === null || b === null) return a !== b;
    return Math.abs(b - a) >= SCORE_MOVE_POINTS;
  });
}

/** The same signal ids, in any order. */
export function sameSignals(previous: readonly string[], current: readonly string[]): boolean {
  if (previous.length !== current.length) return false;
  const before = new Set(previous);
  return current.every((id) => before.has(id));
}

/**
 * narrative.shift: a narrative's 24 h attention share moved by at least this much (a
 * fraction of all token mentions: 0.05 = 5 percentage points) since the last shift
 * published for it, or since it was first seen.
 */
export const NARRATIVE_SHIFT_SHARE = 0.05;

export function shareShifted(previous: number, current: number): boolean {
  return Math.abs(current - previous) >= NARRATIVE_SHIFT_SHARE;
}
