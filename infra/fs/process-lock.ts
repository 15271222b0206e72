import { createHash } from 'node:crypto';
import net from 'node:net';
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * A mutual-exclusion lock between processes of this machine, named after a file path
 * (whose parent directory must exist).
 *
 * It binds a Linux abstract Unix socket derived from the path. The kernel releases the
 * binding when the holder dies, even by kill -9, so a lock is never left stale and no
 * process has to guess whether a holder is still alive (the weak point of pid files).
 * Within one process, callers queue on a promise chain before contending for the socket.
 */
export class ProcessLock {
  private readonly socketName: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(path: string) {
    // The parent must exist; the named file itself need not.
    const canonical = join(realpathSync.native(dirname(path)), basename(path));
    this.socketName = '\0tqa-lock-' + createHash('sha256').update(canonical).digest('hex').slice(0, 40);
  }

  /** Runs `fn` while holding the lock; waits (polling with backoff) while another process holds it. */
  withLock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      const server = await this.acquire();
      try {
        return await fn();
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Holds the lock until the returned release function is called (e.g. a group member's lifetime). */
  async hold(signal?: AbortSignal): Promise<() => Promise<void>> {
    const server = await this.acquire(signal);
    return () => new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async acquire(signal?: AbortSignal): Promise<net.Server> {
    for (let attempt = 0; ; attempt++) {
      const server = net.createServer();
      const bound = await new Promise<boolean>((resolve, reject) => {
        server.once('error', (err: NodeJS.ErrnoException) =>
          err.code === 'EADDRINUSE' ? resolve(false) : reject(err),
        );
        server.listen({ path: this.socketName, exclusive: true }, () => resolve(true));
      });
      if (bound) return server;
      signal?.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, Math.min(1 + attempt, 20)));
    }
  }
}
