/** How long an answer of a listing read is shared between identical requests. */
export const READ_CACHE_TTL_MS = 1_000;
const READ_CACHE_MAX = 1_000;

export interface ReadCacheOptions {
  now: () => number;
  ttlMs?: number;
}

/**
 * Identical reads within `ttlMs` share one answer, and identical reads in flight share one
 * load. For listings (tokens, scanner) whose store query costs milliseconds of the event
 * loop (DuckDB plans and converts results on the calling thread) while their answer changes
 * only as often as the projections write, in batches; the price is that an answer may be up
 * to `ttlMs` older than the store. A failed load is not kept.
 */
export class ReadCache<T> {
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly entries = new Map<string, { loadedAt: number; value: Promise<T> }>();

  constructor({ now, ttlMs = READ_CACHE_TTL_MS }: ReadCacheOptions) {
    this.now = now;
    this.ttlMs = ttlMs;
  }

  get(key: string, load: () => Promise<T>): Promise<T> {
    const at = this.now();
    const entry = this.entries.get(key);
    if (entry && at - entry.loadedAt < this.ttlMs) return entry.value;
    this.entries.delete(key);
    // Map order is insertion order: dropping the first entry drops the oldest.
    if (this.entries.size >= READ_CACHE_MAX) this.entries.delete(this.entries.keys().next().value as string);
    const value = load();
    this.entries.set(key, { loadedAt: at, value });
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    return value;
  }
}
