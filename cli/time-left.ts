/**
 * How long a catch-up has left: the records every stage is still to cover (its lag, and what
 * the stages upstream are still to write for it) over the rate at which all stages together
 * covered records in the last minute, smoothed.
 *
 * The sum is the pace, not the slowest stage's own rate: the stages share the machine's cores,
 * so one that finishes frees the others, and a stage waiting on its input goes at the pace it
 * arrives, not at its own. The rate is the last minute's, not the average since the start:
 * a first start seeds its history before the stages get the cores, and that slow start made
 * the time left, taken from the share done over the time since the start, read hours.
 */

/** The seconds left, or null while the rate is not known. */
export function secondsLeft(remainingRecords: number, ratePerSecond: number | null): number | null {
  if (remainingRecords === 0) return 0;
  return ratePerSecond ? remainingRecords / ratePerSecond : null;
}

/** How far back a stage's rate looks, at least: long enough to span several checkpoints, which is when a processor's count moves. */
export const RATE_WINDOW_MS = 60_000;
/** A rate over less than this would be one checkpoint's jump. */
const MIN_RATE_SPAN_MS = 10_000;

/**
 * Counts of records covered (a stage's, or all stages'), sampled over time: each one's rate
 * from its count a window ago to now. The window reaches back to the count's change before
 * last when that is older: a processor whose checkpoints are spaced wider than the window (a
 * large state) still has a rate, which falls as long as it moves no more.
 */
export class StageRates {
  /** Per stage, the times its count changed (the first sample too), oldest first. */
  private readonly changes = new Map<string, { at: number; done: number }[]>();
  private now = -Infinity;

  add(at: number, done: ReadonlyMap<string, number>): void {
    this.now = at;
    for (const [name, count] of done) {
      const changes = this.changes.get(name) ?? [];
      this.changes.set(name, changes);
      if (changes.at(-1)?.done !== count) changes.push({ at, done: count });
      // Keep the last two changes and whatever the window needs: one change at or before its start.
      while (changes.length > 2 && changes[1].at <= at - RATE_WINDOW_MS) changes.shift();
    }
  }

  /** Records per second from the oldest change kept to now; null until that spans MIN_RATE_SPAN_MS, or when nothing moved. */
  rate(name: string): number | null {
    const changes = this.changes.get(name);
    if (!changes || changes.length < 2 || this.now - changes[0].at < MIN_RATE_SPAN_MS) return null;
    return ((changes.at(-1)!.done - changes[0].done) * 1000) / (this.now - changes[0].at);
  }
}

/** How much a new estimate of the end moves the shown one: a few measurements settle a real change, one outlier does not. */
const END_SMOOTHING = 0.25;

/** The end time shown, moved a share of the way to each new estimate, so a noisy measurement does not make it jump. */
export class SmoothedEnd {
  private end: number | null = null;

  /** The seconds left from `now`, given a new estimate (null: unknown, which resets it). */
  update(now: number, seconds: number | null): number | null {
    if (seconds === null) {
      this.end = null;
      return null;
    }
    const estimate = now + seconds * 1000;
    this.end = this.end === null ? estimate : this.end + END_SMOOTHING * (estimate - this.end);
    return Math.max(0, (this.end - now) / 1000);
  }
}
