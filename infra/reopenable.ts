/**
 * A connection opened on first use and kept, unless opening failed: a peer down at the first
 * call (the store, say) is tried again at the next one rather than failing for the process's life.
 */
export class Reopenable<T> {
  private pending: Promise<T> | undefined;

  constructor(private readonly open: () => Promise<T>) {}

  get(): Promise<T> {
    if (this.pending) return this.pending;
    const opening = this.open();
    this.pending = opening;
    opening.catch(() => {
      if (this.pending === opening) this.pending = undefined;
    });
    return opening;
  }

  /** Uses `value` from now on instead of opening one. */
  replace(value: T): void {
    this.pending = Promise.resolve(value);
  }

  /** The opening in hand (done or in progress), without starting one; undefined if none was or it failed. */
  current(): Promise<T> | undefined {
    return this.pending;
  }

  /** What was opened (or is being opened), without opening it; undefined if nothing was or it failed. */
  async opened(): Promise<T | undefined> {
    return this.current()?.catch(() => undefined);
  }
}
