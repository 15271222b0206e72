/** One input of a task as the runtime's watch sees it at a look. */
export interface InputLook {
  /** Next offset expected from the consumer. */
  fetched: number;
  /** Records fetched and not yet processed. */
  queued: number;
  /** The partition's end offset as last read; undefined while none has been read. */
  end: number | undefined;
}

/**
 * Whether an input has fetched nothing for a whole watch interval although the log had records
 * for it: at the last look its end was already past its fetch position, and that position has
 * not moved since. A record appended just before this look is not yet a stall; an input whose
 * fetched records wait in its queue waits on another input, not on the fetch.
 */
export function stalledSince(lastLook: InputLook | undefined, now: InputLook): now is InputLook & { end: number } {
  if (lastLook?.end === undefined || now.end === undefined || now.queued > 0) return false;
  return lastLook.end > lastLook.fetched && now.fetched === lastLook.fetched;
}
