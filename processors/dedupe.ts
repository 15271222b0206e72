/**
 * Inputs arrive at least once (a collector retries, a simulator resumes after a crash, a
 * processor repeats its outputs after a crash), so a processor drops a record it has
 * already seen: the engine a post by its id or a tick by token and time, the public-events
 * processor a derived record by its id. Keys are remembered for a window of event time; the
 * Map keeps insertion order, which follows event time closely enough to prune from the front.
 */
export interface DedupeState {
  windowMs: number;
  seen: Map<string, number>;
  repeats: number;
}

export function createDedupeState(windowMs: number): DedupeState {
  return { windowMs, seen: new Map(), repeats: 0 };
}

/** True the first time `key` is seen within the window; counts the repeats. */
export function firstDelivery(state: DedupeState, key: string, ts: number): boolean {
  // Pruning walks from the oldest key; once per 256 calls keeps it off the per-record cost.
  if (state.seen.size % 256 === 0) {
    for (const [oldest, at] of state.seen) {
      if (at >= ts - state.windowMs) break;
      state.seen.delete(oldest);
    }
  }
  if (state.seen.has(key)) {
    state.repeats++;
    return false;
  }
  state.seen.set(key, ts);
  return true;
}
