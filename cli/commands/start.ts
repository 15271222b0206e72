import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import type { MessagePort } from 'node:worker_threads';
import { KeyService } from '../../api/keys.ts';
import { openLogServices } from '../../infra/bootstrap.ts';
import { stateFile } from '../../infra/feeds/sim/state-store.ts';
import { Reopenable } from '../../infra/reopenable.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { openStore } from '../../projections/open-store.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { CatchUpMonitor, catchUpProgress } from '../catch-up.ts';
import type { CliCommand } from '../command.ts';
import { startHealthPort } from '../health-port.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { ROLE_NAMES, ROLES } from '../roles/index.ts';
import { checkpointsInStore } from '../roles/processors.ts';
import { warnWhileStopping, type RunningRole } from '../roles/role.ts';
import { stopWithin } from '../stop-within.ts';

export const startCommand: CliCommand = {
  name: 'start',
  summary: 'run the service: every role, or the ones named with --roles',
  usage: `tqa start [--roles ${ROLE_NAMES.join(',')}]`,
  async run(args, { config, logger, stdout, stderr }) {
    const { values } = parseArgs({ args, options: { roles: { type: 'string', default: ROLE_NAMES.join(',') } } });
    const names = values.roles.split(',').map((r) => r.trim());
    const unknown = names.filter((r) => !ROLE_NAMES.includes(r));
    if (unknown.length > 0) throw new UsageError(`unknown role ${unknown.join(', ')}; roles are ${ROLE_NAMES.join(', ')}`);

    if (config.TQA_WEBHOOKS_ALLOW_PRIVATE) {
      logger.warn('TQA_WEBHOOKS_ALLOW_PRIVATE is on: webhooks may use plain HTTP and private or loopback receivers; for local development and tests only');
    }
    // Listened for from the start: a signal while roles start (a worker thread takes a few
    // seconds) stops the ones started so far as gracefully as a later one; so does a started
    // role that fails by itself, and the start then exits with 1.
    // (The failure itself is logged by the role that reports it.)
    let failed: () => void = () => undefined;
    const stopCause = new Promise<NodeJS.Signals | 'failed'>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
      failed = () => resolve('failed');
    });
    const services = await openLogServices(config, logger);
    // How far the stages are behind: for /v1/health, and on stderr while a catch-up runs here.
    const seeds = names.includes('feeds') && config.TQA_SIM === 'auto';
    const catchUp = new CatchUpMonitor({ log: services.log, logger, seeding: seeds ? () => !existsSync(stateFile(config.TQA_DATA_DIR)) : undefined });
    const works = names.includes('processors') || names.includes('projections');
    if (works || names.includes('api')) catchUp.start(works ? catchUpProgress(stderr) : undefined);
    const store = new Reopenable(() => openStore(config, logger));
    let connectStore: (() => MessagePort) | undefined;
    let keys: KeyService | undefined;
    const running: { name: string; role: RunningRole }[] = [];
    let healthPort: Server | undefined;
    // Graceful shutdown: stop taking input, let each role finish what it has in hand, in ROLES
    // order; within TQA_STOP_TIMEOUT_MS, or the start exits 1 naming the step it gave up on.
    const stopAll = async (): Promise<boolean> => {
      const unfinished = await stopWithin(
        [
          { name: 'health port', run: async () => void healthPort?.close() },
          { name: 'catch-up monitor', run: () => catchUp.stop() },
          ...running.map(({ name, role }) => ({ name: `role ${name}`, run: () => role.stop() })),
          // Last: the roles that read or wrote it are done with it.
          { name: 'store', run: async () => (await store.opened())?.close() },
          { name: 'log', run: () => services.close() },
        ],
        config.TQA_STOP_TIMEOUT_MS,
      );
      if (unfinished === null) return true;
      logger.error(
        { stillStopping: unfinished, timeoutMs: config.TQA_STOP_TIMEOUT_MS },
        'the stop did not finish within TQA_STOP_TIMEOUT_MS; exiting without it: what it did not save is redone on the next start, as after a kill',
      );
      return false;
    };
    try {
      for (const role of [...ROLES].reverse().filter((r) => names.includes(r.name))) {
        const ctx = {
          config,
          logger: logger.child({ role: role.name }),
          services,
          store: () => store.get(),
          shareStore: (shared: AnalyticalStore<ProjectionTables>, connect?: () => MessagePort) => {
            store.replace(shared);
            connectStore = connect;
          },
          storeConnection: () => connectStore?.(),
          keys: () => (keys ??= new KeyService({ log: services.log, codec: services.codec })),
          stdout,
          catchUp,
          failed,
        };
        running.unshift({ name: role.name, role: warnWhileStopping(await role.start(ctx), ctx.logger) });
      }
      if (config.TQA_HEALTH_PORT !== undefined) {
        // Processors that keep checkpoints in the store open one of their own on their threads: probe one here too.
        const probedStore = names.includes('processors') && checkpointsInStore(config, services.log.kind) ? () => store.get() : () => store.current();
        healthPort = await startHealthPort({ port: config.TQA_HEALTH_PORT, roles: names, log: services.log, store: probedStore, catchUp, logger });
      }
    } catch (err) {
      // A role that cannot start (its port is taken, or the health port is) ends the start: the
      // roles already running stop too, or their threads and servers would keep the process
      // alive, doing half the work.
      await stopAll().catch((stopErr: unknown) => logger.error({ err: stopErr }, 'stopping the roles started failed'));
      throw err;
    }
    logger.info({ roles: names, mode: config.TQA_LOG, dataDir: config.TQA_DATA_DIR }, 'service started');

    const cause = await stopCause;
    logger.info(cause === 'failed' ? { failed: true } : { signal: cause }, 'stopping');
    if (!(await stopAll())) return 1;
    logger.info('stopped');
    return cause === 'failed' ? 1 : 0;
  },
};
