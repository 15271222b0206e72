/**
 * Gives the event loop a turn every few milliseconds of a long run of work. Work that goes
 * through a queue in one chain of awaits runs in microtasks, and microtasks starve everything
 * else on the thread: I/O completions (a log append in flight), timers and messages from
 * other threads (a store read asked by the API). Create one per run and call `due()` per item.
 */
export class EventLoopTurns {
  private lastTurn = performance.now();
  private items = 0;

  /** `everyMs`: the longest stretch without a turn; the clock is read every `checkEvery` items. */
  constructor(
    private readonly everyMs = 4,
    private readonly checkEvery = 32,
  ) {}

  /** A promise to await when a turn is due, else undefined (awaiting nothing would still cost a tick). */
  due(): Promise<void> | undefined {
    if (++this.items % this.checkEvery !== 0 || performance.now() - this.lastTurn < this.everyMs) return undefined;
    return new Promise((resolve) =>
      setImmediate(() => {
        this.lastTurn = performance.now();
        resolve();
      }),
    );
  }
}
