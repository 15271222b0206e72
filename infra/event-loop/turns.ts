/**
 * Gives the event loop a turn every few milliseconds of a long run of work. Work that goes
 * through a queue in one chain of awaits runs in microtasks, and microtasks starve everything
 * else on the thread: I/O completions (a log append in flight), timers and messages from
 * other threads (a store read asked by the API). Create one per run and call `due()` per item.
 *
 * The budget is the thread's, not the run's: every run on the thread (the projections each
 * run one, and the store's appends another) counts from when the loop's current turn began,
 * so together they hold the loop for `everyMs` a turn. With a budget each, runs that yielded
 * together would resume one after another in the same turn, and a read asked by another
 * thread would wait for the sum of them.
 */
export class EventLoopTurns {
  private items = 0;

  /** `everyMs`: the longest stretch without a turn; the clock is read every `checkEvery` items. */
  constructor(
    private readonly everyMs = 4,
    private readonly checkEvery = 32,
  ) {}

  /** A promise to await when a turn is due, else undefined (awaiting nothing would still cost a tick). */
  due(): Promise<void> | undefined {
    if (++this.items % this.checkEvery !== 0 || performance.now() - turnBegan < this.everyMs) return undefined;
    return new Promise((resolve) => resumeInALaterTurn(this.everyMs, resolve));
  }
}

/** When this thread's event loop began the work of its current turn (module state is per thread). */
let turnBegan = performance.now();
let turnMarkQueued = false;

/**
 * Resumes once a turn of the loop has budget left. Immediates run in the order they were
 * queued, so the mark queued ahead of the waiters notes when their turn began; a waiter that
 * finds the budget spent by those resumed before it waits for the next turn, after the loop
 * has polled for I/O and messages again.
 */
function resumeInALaterTurn(everyMs: number, resume: () => void): void {
  if (!turnMarkQueued) {
    turnMarkQueued = true;
    setImmediate(() => {
      turnMarkQueued = false;
      turnBegan = performance.now();
    });
  }
  setImmediate(() => (performance.now() - turnBegan < everyMs ? resume() : resumeInALaterTurn(everyMs, resume)));
}
