/**
 * Event times in files and on the command line. ISO-8601 needs a date, a time and an
 * explicit offset (Z or ±hh:mm): a time without one would silently depend on the zone of
 * the machine that reads it.
 */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** Epoch ms of an ISO-8601 time with an offset, or null. */
export function parseIsoTime(text: string): number | null {
  if (!ISO.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * Epoch ms from unix time given in seconds or milliseconds. Magnitudes below 10^11 are
 * seconds (10^11 s is the year 5138, 10^11 ms is 1973), so any plausible event time is
 * unambiguous; seconds may carry a fraction, milliseconds are whole and exact (at most 2^53).
 */
export function unixToMs(n: number): number | null {
  if (!Number.isFinite(n)) return null;
  if (Math.abs(n) < 1e11) return Math.round(n * 1000);
  return Number.isSafeInteger(n) ? n : null;
}
