import { ReadBatcher } from './read-batcher.ts';

/** Keys per read when the held values are read again. */
const READ_CHUNK = 1_000;

export interface RefreshedLookupOptions<V> {
  /** The values of `keys` that exist, by key; at most READ_CHUNK keys a call. */
  read: (keys: readonly string[]) => Promise<Map<string, V>>;
  now: () => number;
  /** The bound on how late a change of a held value shows. */
  ttlMs: number;
  /** Values held at most; past it the oldest is dropped. */
  max: number;
}

/**
 * Values found by key (API keys, token metadata), held in memory and all read again together
 * once `ttlMs` has passed (begun in the background after half of it): a change shows at most
 * `ttlMs` after the store has it, and the store sees one read per thousand held values per
 * `ttlMs`, however many requests and keys there are (an expiry per value costs a read per
 * request once the values outnumber what requests keep warm). Keys not found are not held,
 * so a new value shows as soon as it is stored. Concurrent callers share one refresh, and the
 * misses of requests that come together share one read.
 */
export class RefreshedLookup<V> {
  private readonly options: RefreshedLookupOptions<V>;
  private readonly held = new Map<string, V>();
  private checkedAt = -Infinity;
  private refreshing: Promise<void> | undefined;
  /** Reads of the keys not held. */
  private readonly misses: ReadBatcher<V>;

  constructor(options: RefreshedLookupOptions<V>) {
    this.options = options;
    this.misses = new ReadBatcher((keys) => this.readAndHold(keys), READ_CHUNK);
  }

  /**
   * The values of `keys` that exist, by key. Keys not held are read in batches: the misses
   * of requests that come together share one read.
   */
  async get(keys: readonly string[]): Promise<Map<string, V>> {
    const age = this.options.now() - this.checkedAt;
    if (age >= this.options.ttlMs) await this.refresh();
    // Renewed in the background from half the bound: requests wait for the store only when none
    // came in that half or the read took longer (a store busy with a catch-up answers slowly).
    else if (age >= this.options.ttlMs / 2) this.refresh().catch(() => undefined);
    const found = new Map<string, V>();
    const waiting: [string, Promise<V | undefined>][] = [];
    for (const key of new Set(keys)) {
      const value = this.held.get(key);
      if (value !== undefined) found.set(key, value);
      else waiting.push([key, this.misses.get(key)]);
    }
    const values = await Promise.all(waiting.map(([, value]) => value));
    waiting.forEach(([key], i) => {
      const value = values[i];
      if (value !== undefined) found.set(key, value);
    });
    return found;
  }

  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      const startedAt = this.options.now();
      const keys = [...this.held.keys()];
      const fresh = await this.read(keys);
      for (const key of keys) {
        const value = fresh.get(key);
        if (value === undefined) this.held.delete(key);
        else this.held.set(key, value);
      }
      this.checkedAt = startedAt;
    })().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readAndHold(keys: readonly string[]): Promise<Map<string, V>> {
    const values = await this.read(keys);
    for (const [key, value] of values) {
      // Map order is insertion order: dropping the first entry drops the oldest.
      if (this.held.size >= this.options.max) this.held.delete(this.held.keys().next().value as string);
      this.held.set(key, value);
    }
    return values;
  }

  private async read(keys: readonly string[]): Promise<Map<string, V>> {
    const found = new Map<string, V>();
    for (let i = 0; i < keys.length; i += READ_CHUNK) {
      for (const [key, value] of await this.options.read(keys.slice(i, i + READ_CHUNK))) found.set(key, value);
    }
    return found;
  }
}
