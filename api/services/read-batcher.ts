/**
 * Reads of values by key, gathered into batches: one read runs at a time, and every key asked
 * for while it runs, or in the same turn of the event loop, goes into the next (at most
 * `maxKeys` a read; more start another after it). So many requests meeting a cold cache at
 * once (a first start, a restart under load) cost the store a read per batch, not one each,
 * which a store busy with a catch-up would otherwise queue. A key asked for again before its
 * read ends shares that read.
 */
export class ReadBatcher<V> {
  private readonly pending = new Map<string, Promise<V | undefined>>();
  /** The read not begun yet, which a key not pending joins. */
  private next: { keys: Set<string>; values: Promise<Map<string, V>> } | undefined;
  /** The read begun last; settled when none is running. */
  private last: Promise<unknown> = Promise.resolve();

  constructor(
    /** The values of `keys` that exist, by key. */
    private readonly read: (keys: readonly string[]) => Promise<Map<string, V>>,
    private readonly maxKeys: number,
  ) {}

  /** `key`'s value from its batch's read; undefined when the read found none. */
  get(key: string): Promise<V | undefined> {
    const pending = this.pending.get(key);
    if (pending) return pending;
    if (!this.next || this.next.keys.size >= this.maxKeys) this.next = this.batch();
    this.next.keys.add(key);
    const value = this.next.values.then((values) => values.get(key));
    this.pending.set(key, value);
    return value;
  }

  private batch(): { keys: Set<string>; values: Promise<Map<string, V>> } {
    const keys = new Set<string>();
    const values = this.last
      .then(() => new Promise((resolve) => setImmediate(resolve)))
      .then(() => {
        if (this.next?.keys === keys) this.next = undefined;
        return this.read([...keys]);
      })
      .finally(() => keys.forEach((key) => this.pending.delete(key)));
    this.last = values.catch(() => undefined);
    return { keys, values };
  }
}
