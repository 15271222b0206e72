import { once } from 'node:events';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Config } from '../../infra/config.ts';
import type { Logger } from '../../infra/logging.ts';
import { RemoteStore } from '../../infra/store/remote/remote-store.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import type { Role, RunningRole } from './role.ts';

/** What the thread is told to run: a role exported by a module, with the process's config. */
export interface RoleThreadData {
  module: string;
  exportName: string;
  /** When given, the export is a record of roles and the thread runs the one under this key. */
  key?: string;
  config: Config;
  /** The thread opens the embedded store and serves it to the other ends of these ports. */
  serveStoreOn?: { port: MessagePort; writable: boolean }[];
  /** The thread's store is the one served on the other end of this port. */
  storeThrough?: MessagePort;
  /** The thread's nice value (Linux keeps one per thread); 0 leaves it as the process's. */
  nice: number;
}

interface ThreadOptions {
  holdsStore?: boolean;
  /** The thread's nice value from the config; 0 (the process's priority) when not given. */
  nice?: (config: Config) => number;
  key?: string;
}

export type RoleThreadMessage = { type: 'started' } | { type: 'stop' } | { type: 'stopped' };

/**
 * A role that runs on a worker thread of its own, with its own log connection: its CPU work
 * (the quant engine's catch-up, the projections' decoding and writing) never holds the event
 * loop that answers HTTP requests in the same process. The role is named by its module and
 * export because a thread imports its code afresh.
 *
 * `nice`: the role works through backlogs (a first start's seeding, a catch-up) that may
 * take every core; its thread runs at a lower priority, so when the cores are short the
 * kernel serves the API's thread (and the store's reads) first.
 *
 * `holdsStore`: the role writes the store. Embedded DuckDB allows one instance per file, so
 * a store thread of its own opens it, at the process's priority: the role writes through it,
 * and the roles of the main thread read through it (ctx.shareStore), so a read waits neither
 * for the role's work nor behind its lower priority. A store server (ClickHouse) is opened
 * by each thread itself.
 *
 * `key`: the export is a record of roles, and the thread runs the one under this key.
 */
export function onWorkerThread(name: string, module: URL, exportName: string, { holdsStore = false, nice: niceOf, key }: ThreadOptions = {}): Role {
  return {
    name,
    async start({ config, logger, shareStore }) {
      const roleData = { module: module.href, exportName, key, config, nice: niceOf?.(config) ?? 0 };
      if (!holdsStore || config.TQA_STORE !== 'duckdb') return startThread(name, roleData, logger);

      const forRole = new MessageChannel();
      const forReaders = new MessageChannel();
      const storeThread = await startThread(
        'store',
        {
          module: new URL('./store-host.ts', import.meta.url).href,
          exportName: 'storeHostRole',
          config,
          nice: 0,
          serveStoreOn: [
            { port: forRole.port2, writable: true },
            { port: forReaders.port2, writable: false },
          ],
        },
        logger,
      );
      let roleThread: RunningRole;
      try {
        roleThread = await startThread(name, { ...roleData, storeThrough: forRole.port1 }, logger);
      } catch (err) {
        await storeThread.stop();
        throw err;
      }
      shareStore?.(new RemoteStore(forReaders.port1, PROJECTION_TABLES));
      return {
        async stop() {
          // The role's last writes go through the store thread, which then closes the store.
          await roleThread.stop();
          await storeThread.stop();
        },
      };
    },
  };
}

/** Starts a thread (bin/role-thread.js) and resolves once its role has started. */
async function startThread(name: string, workerData: RoleThreadData, logger: Logger): Promise<RunningRole> {
  const ports = [...(workerData.serveStoreOn ?? []).map((s) => s.port), ...(workerData.storeThrough ? [workerData.storeThrough] : [])];
  const worker = new Worker(new URL('../../bin/role-thread.js', import.meta.url), { workerData, transferList: ports });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', (message: RoleThreadMessage) => (message.type === 'started' ? resolve() : reject(new Error(`unexpected ${message.type}`))));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the ${name} thread exited with code ${code} while starting`)));
  });
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
}
