import { createHash } from 'node:crypto';
import net from 'node:net';
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** How long a holder that released a contended lock stands back for a waiter to take it. */
const STAND_BACK_MAX_MS = 200;

/**
 * A mutual-exclusion lock between processes of this machine, named after a file path
 * (whose parent directory must exist).
 *
 * It binds a Linux abstract Unix socket derived from the path. The kernel releases the
 * binding when the holder dies, even by kill -9, so a lock is never left stale and no
 * process has to guess whether a holder is still alive (the weak point of pid files).
 * Within one process, callers queue on a promise chain before contending for the socket.
 *
 * Waiters connect to the holder's socket and retry the moment that connection closes, so a
 * release (or the holder's death) hands over at once instead of at the next poll. A holder
 * that saw waiters stands back after its release until one of them holds the lock: without
 * that, a process appending in a loop re-takes the lock within microseconds and a command of
 * another process (an operator's `tqa keys create` during a catch-up) waits for seconds.
 */
export class ProcessLock {
  private readonly socketName: string;
  private queue: Promise<unknown> = Promise.resolve();
  private standBack = false;

  constructor(path: string) {
    // The parent must exist; the named file itself need not.
    const canonical = join(realpathSync.native(dirname(path)), basename(path));
    this.socketName = '\0tqa-lock-' + createHash('sha256').update(canonical).digest('hex').slice(0, 40);
  }

  /** Runs `fn` while holding the lock; waits while another process holds it. */
  withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      const release = await this.acquire();
      try {
        return await fn();
      } finally {
        await release();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Holds the lock until the returned release function is called (e.g. a group member's lifetime). */
  hold(signal?: AbortSignal): Promise<() => Promise<void>> {
    return this.acquire(signal);
  }

  private async acquire(signal?: AbortSignal): Promise<() => Promise<void>> {
    if (this.standBack) {
      this.standBack = false;
      await this.untilTakenByAnother(signal);
    }
    for (;;) {
      const waiters = new Set<net.Socket>();
      const server = net.createServer((socket) => {
        waiters.add(socket);
        socket.on('error', () => undefined);
        socket.on('close', () => waiters.delete(socket));
      });
      if (await this.bind(server)) {
        return () =>
          new Promise<void>((resolve) => {
            this.standBack = waiters.size > 0;
            server.close(() => resolve());
            for (const socket of waiters) socket.destroy();
          });
      }
      signal?.throwIfAborted();
      await this.untilReleased(signal);
    }
  }

  private bind(server: net.Server): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(false) : reject(err)));
      server.listen({ path: this.socketName, exclusive: true }, () => resolve(true));
    });
  }

  /**
   * Resolves when the current holder releases the lock or dies: its socket closes our
   * connection. A refused connection means the holder is between release and close, or gone.
   */
  private untilReleased(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const socket = net.connect({ path: this.socketName });
      const done = (): void => {
        signal?.removeEventListener('abort', done);
        socket.destroy();
        resolve();
      };
      socket.once('error', () => setTimeout(done, 1));
      socket.once('close', done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** After a contended release: waits until a waiter holds the lock, or gives up after STAND_BACK_MAX_MS (the waiter went away). */
  private async untilTakenByAnother(signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + STAND_BACK_MAX_MS;
    while (Date.now() < deadline && !signal?.aborted) {
      if (await this.isHeld()) return;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  /** Whether some process holds the lock now (its socket accepts a connection). */
  isHeld(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const socket = net.connect({ path: this.socketName });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  }
}
