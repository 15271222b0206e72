import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import type { Config } from '../../infra/config.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { RemoteStore } from '../../infra/store/remote/remote-store.ts';
import { serveStore, type TextQueryStore } from '../../infra/store/remote/store-host.ts';
import { PROJECTION_TABLES, type ProjectionTables } from '../../projections/tables.ts';
import type { Role } from './role.ts';
import { threadCode } from './thread-code.ts';

/** What the thread is told to run: a role exported by a module, with the process's config. */
export interface RoleThreadData {
  /** The thread's code and the role's module, bundled (threadCode). */
  main: string;
  module: string;
  exportName: string;
  /** When given, the export is a function of these arguments (structured-cloneable) that makes the role. */
  args?: unknown[];
  config: Config;
  /** Where the thread serves its store to the process's other roles (embedded DuckDB). */
  storePort?: MessagePort;
  /** Where the thread reads the store another thread holds (embedded DuckDB); absent: it opens one itself. */
  readStorePort?: MessagePort;
  /** The thread's nice value (Linux keeps one per thread); 0 leaves it as the process's. */
  nice: number;
}

interface ThreadOptions {
  holdsStore?: boolean;
  readsStore?: boolean;
  background?: boolean;
  args?: unknown[];
}

/** `failed`: the role on the thread reported a failure of its own (RoleContext.failed). */
/** `serve`: the thread that holds the store serves it on `port` too (a connection for another thread). */
export type RoleThreadMessage = { type: 'started' } | { type: 'stop' } | { type: 'stopped' } | { type: 'failed'; err: unknown } | { type: 'serve'; port: MessagePort };

/**
 * A role that runs on a worker thread of its own, with its own log connection: its CPU work
 * (the quant engine's catch-up, the projections' decoding and writing) never holds the event
 * loop that answers HTTP requests in the same process. The role is named by its module and
 * export because a thread imports its code afresh.
 *
 * `background`: the role works through backlogs (a first start's seeding, a catch-up) that
 * may take every core; its thread runs at TQA_BACKGROUND_NICE, so when the cores are short
 * the kernel serves the API's thread (and the store's reads) first.
 *
 * `holdsStore`: the role writes the store. Embedded DuckDB allows one instance per file, so
 * the thread opens it and serves it to the roles of the main thread, which read it through a
 * RemoteStore (ctx.shareStore); a store server (ClickHouse) is opened by each thread itself.
 *
 * `readsStore`: the role reads the store. With embedded DuckDB the thread reads it from the
 * thread that holds it, on a connection of its own (ctx.storeConnection), so that the rows
 * it reads never pass through the API's thread.
 *
 * `args`: the export is a function that makes the role from these arguments.
 */
export function onWorkerThread(
  name: string,
  module: URL,
  exportName: string,
  { holdsStore = false, readsStore = false, background = false, args }: ThreadOptions = {},
): Role {
  return {
    name,
    async start({ config, logger, store, shareStore, storeConnection, failed }) {
      const embedded = config.TQA_STORE === 'duckdb';
      const channel = holdsStore && embedded ? new MessageChannel() : undefined;
      const readStorePort = readsStore && embedded ? (storeConnection?.() ?? servedFromThisThread(await store())) : undefined;
      const nice = background ? config.TQA_BACKGROUND_NICE : 0;
      const code = await threadCode(module);
      const workerData: RoleThreadData = { main: code.main.href, module: code.module.href, exportName, args, config, storePort: channel?.port2, readStorePort, nice };
      const worker = new Worker(new URL('../../bin/role-thread.js', import.meta.url), {
        workerData,
        transferList: [channel?.port2, readStorePort].filter((port) => port !== undefined),
      });
      // Listened for from the start: a thread that failed has exited before its stop is asked.
      // (Not events.once, which would reject on the 'error' that comes first.)
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      const started = new Promise<void>((resolve, reject) => {
        worker.once('message', (message: RoleThreadMessage) => (message.type === 'started' ? resolve() : reject(new Error(`unexpected ${message.type}`))));
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`the ${name} thread exited with code ${code} while starting`)));
      });
      await started;
      if (channel) {
        const connect = (): MessagePort => {
          const connection = new MessageChannel();
          worker.postMessage({ type: 'serve', port: connection.port2 } satisfies RoleThreadMessage, [connection.port2]);
          return connection.port1;
        };
        shareStore?.(new RemoteStore(channel.port1, PROJECTION_TABLES), connect);
      }
      // A failure after the start, an uncaught exception on the thread or one its role reports,
      // ends the process, through `failed` gracefully (a thread that holds DuckDB, torn down by
      // an exit, can abort the process).
      const fail = (err: unknown) => {
        logger.fatal({ err }, `the ${name} thread failed`);
        if (failed) failed(err);
        else process.exit(1);
      };
      worker.on('error', fail);
      worker.on('message', (message: RoleThreadMessage) => {
        if (message.type === 'failed') fail(message.err);
      });
      return {
        async stop() {
          worker.postMessage({ type: 'stop' } satisfies RoleThreadMessage);
          await exited;
        },
      };
    },
  };
}

/**
 * A connection to the store this thread opened, for a thread that reads it: without the
 * projections role in the process no thread holds it, and DuckDB allows one instance per file.
 */
function servedFromThisThread(store: AnalyticalStore<ProjectionTables>): MessagePort {
  // Told by its method, not its class: importing DuckDbStore here would load DuckDB into every process.
  if (!('queryText' in store)) throw new Error('only an embedded DuckDB store is served to another thread');
  const connection = new MessageChannel();
  serveStore(store as TextQueryStore, connection.port1);
  return connection.port2;
}
