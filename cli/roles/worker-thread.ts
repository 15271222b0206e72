import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { Config } from '../../infra/config.ts';
import type { Role } from './role.ts';

/** What the thread is told to run: a role exported by a module, with the process's config. */
export interface RoleThreadData {
  module: string;
  exportName: string;
  config: Config;
}

export type RoleThreadMessage = { type: 'started' } | { type: 'stop' } | { type: 'stopped' };

/**
 * A role that runs on a worker thread of its own, with its own log connection: its CPU work
 * (the quant engine's catch-up) never holds the event loop that answers HTTP requests in the
 * same process. Only roles that need no store go here (embedded DuckDB allows one instance
 * per file, and the API and the projections share the process's). The role is named by its
 * module and export because a thread imports its code afresh.
 */
export function onWorkerThread(name: string, module: URL, exportName: string): Role {
  return {
    name,
    async start({ config, logger }) {
      const workerData: RoleThreadData = { module: module.href, exportName, config };
      const worker = new Worker(new URL('../../bin/role-thread.js', import.meta.url), { workerData });
      const started = new Promise<void>((resolve, reject) => {
        worker.once('message', (message: RoleThreadMessage) => (message.type === 'started' ? resolve() : reject(new Error(`unexpected ${message.type}`))));
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`the ${name} thread exited with code ${code} while starting`)));
      });
      await started;
      // A failure after the start is what an uncaught exception is on one thread: the end of the process.
      worker.on('error', (err) => {
        logger.fatal({ err }, `the ${name} thread failed`);
        process.exit(1);
      });
      return {
        async stop() {
          const exited = once(worker, 'exit');
          worker.postMessage({ type: 'stop' } satisfies RoleThreadMessage);
          await exited;
        },
      };
    },
  };
}
