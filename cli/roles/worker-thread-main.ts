import { once } from 'node:events';
import { parentPort, workerData } from 'node:worker_threads';
import { openLogServices } from '../../infra/bootstrap.ts';
import { createLogger } from '../../infra/logging.ts';
import type { Role } from './role.ts';
import type { RoleThreadData, RoleThreadMessage } from './worker-thread.ts';

// The thread's side of onWorkerThread: starts the role with a log connection of its own,
// stops it when told, then lets the thread end.
const { module, exportName, config } = workerData as RoleThreadData;
const role = (await import(module))[exportName] as Role;
const logger = createLogger(config.LOG_LEVEL).child({ command: 'start', role: role.name, thread: 'worker' });
const services = await openLogServices(config, logger);
const running = await role.start({
  config,
  logger,
  services,
  store: () => Promise.reject(new Error(`the ${role.name} role runs on a worker thread, which has no store`)),
  stdout: process.stdout,
});
const port = parentPort!;
port.postMessage({ type: 'started' } satisfies RoleThreadMessage);
await once(port, 'message');
await running.stop();
await services.close();
port.close();
