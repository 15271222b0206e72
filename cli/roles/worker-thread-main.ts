import { setPriority } from 'node:os';
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { openLogServices } from '../../infra/bootstrap.ts';
import { createLogger } from '../../infra/logging.ts';
import { Reopenable } from '../../infra/reopenable.ts';
import type { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { RemoteStore } from '../../infra/store/remote/remote-store.ts';
import { serveStore } from '../../infra/store/remote/store-host.ts';
import { openStore } from '../../projections/open-store.ts';
import { PROJECTION_TABLES, type ProjectionTables } from '../../projections/tables.ts';
import { warnWhileStopping, type Role } from './role.ts';
import type { RoleThreadData, RoleThreadMessage } from './worker-thread.ts';

/** How long the thread may take to end by itself once its role has stopped and its services have closed. */
const LEFT_OPEN_GRACE_MS = 5_000;

// The thread's side of onWorkerThread: starts the role with a log connection (and, when it
// needs one, a store) of its own, stops it when told, then lets the thread end.
const { module, exportName, args, config, storePort, readStorePort, nice } = workerData as RoleThreadData;
// Before anything starts threads of its own (they inherit it). Linux applies a nice value
// set by a thread to that thread alone.
if (nice > 0) setPriority(nice);
const exported = (await import(module))[exportName];
const role: Role = args === undefined ? exported : exported(...args);
const logger = createLogger(config.LOG_LEVEL).child({ command: 'start', role: role.name, thread: 'worker' });
const services = await openLogServices(config, logger);
const store = new Reopenable<AnalyticalStore<ProjectionTables>>(async () => (readStorePort ? new RemoteStore(readStorePort, PROJECTION_TABLES) : openStore(config, logger)));
const port = parentPort!;
// Served before the role starts: the main thread's roles start once this one has.
if (storePort) {
  const held = (await store.get()) as DuckDbStore<ProjectionTables>;
  serveStore(held, storePort);
  // Connections for the roles of other threads, asked for through the main thread.
  port.on('message', (message: RoleThreadMessage) => {
    if (message.type === 'serve') serveStore(held, message.port);
  });
}
const failed = (err: unknown) => port.postMessage({ type: 'failed', err: cloneable(err) } satisfies RoleThreadMessage);
const running = await role.start({ config, logger, services, store: () => store.get(), stdout: process.stdout, failed });
port.postMessage({ type: 'started' } satisfies RoleThreadMessage);
await until(port, 'stop');
// Each step warns while it takes long, so that a stop that hangs says where.
const step = (name: string, stop: () => Promise<void>) => warnWhileStopping({ stop }, logger.child({ stopStep: name })).stop();
await step('the role', () => running.stop());
await step('the store', async () => {
  await (await store.opened())?.close();
  storePort?.close();
  readStorePort?.close();
});
await step('the log connection', () => services.close());
port.close();
// The thread ends once its event loop is empty. A socket or timer that a library leaves open
// past its close would keep it, and the process's stop waiting for it, alive for good (a closed
// Kafka client once reconnected): name what is left, then end the thread anyway.
setTimeout(() => {
  logger.warn({ open: process.getActiveResourcesInfo() }, 'the role stopped but its thread still holds these open; ending the thread');
  process.exit(0);
}, LEFT_OPEN_GRACE_MS).unref();

/** Resolves on the first message of `type` the main thread sends. */
function until(from: MessagePort, type: RoleThreadMessage['type']): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: RoleThreadMessage) => {
      if (message.type !== type) return;
      from.off('message', listener);
      resolve();
    };
    from.on('message', listener);
  });
}

/** An error as a message can carry it: its name, message and stack (a cause or property may not clone). */
function cloneable(err: unknown): Error {
  const copy = new Error(err instanceof Error ? err.message : String(err));
  if (err instanceof Error) {
    copy.name = err.name;
    copy.stack = err.stack;
  }
  return copy;
}
