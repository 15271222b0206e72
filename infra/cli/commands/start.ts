import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApi } from '../../../api/app.ts';
import { ensureDemoKey } from '../../../api/demo-key.ts';
import { PROCESSORS } from '../../../processors/index.ts';
import { CheckpointStore } from '../../../processors/runtime/checkpoints.ts';
import { ProcessorRuntime } from '../../../processors/runtime/runtime.ts';
import { PROJECTIONS } from '../../../projections/index.ts';
import { startLiveProjections } from '../../../projections/runtime/runner.ts';
import { openLogServices } from '../../bootstrap.ts';
import { loadSimState } from '../../feeds/sim/state-store.ts';
import { runLive, seedHistory } from '../../feeds/sim/runner.ts';
import { openStore } from '../../store/open-store.ts';
import type { CliCommand } from '../command.ts';
import { UsageError } from '../command.ts';

const ROLES = ['api', 'processors', 'projections', 'feeds'] as const;
type Role = (typeof ROLES)[number];

export const startCommand: CliCommand = {
  name: 'start',
  summary: 'run the service: every role, or the ones named with --roles',
  usage: `tqa start [--roles ${ROLES.join(',')}]`,
  async run(args, { config, logger, stdout }) {
    const { values } = parseArgs({ args, options: { roles: { type: 'string', default: ROLES.join(',') } } });
    const roles = values.roles.split(',').map((r) => r.trim());
    const unknown = roles.filter((r) => !ROLES.includes(r as Role));
    if (unknown.length > 0) throw new UsageError(`unknown role ${unknown.join(', ')}; roles are ${ROLES.join(', ')}`);

    const services = await openLogServices(config, logger);
    const stops: (() => Promise<void>)[] = [];
    if (roles.includes('processors')) {
      const checkpoints = new CheckpointStore(join(config.TQA_DATA_DIR, 'state'));
      for (const processor of PROCESSORS) {
        const runtime = new ProcessorRuntime({
          processor,
          log: services.log,
          codec: services.codec,
          checkpoints,
          logger,
          checkpointIntervalMs: config.TQA_CHECKPOINT_INTERVAL_MS,
        });
        runtime.start().catch((err: unknown) => logger.fatal({ err, processor: processor.name }, 'processor stopped'));
        stops.push(() => runtime.stop());
      }
    }
    // One store per process: embedded DuckDB allows one instance, and the api role reads
    // the projections (keys) that the projections role writes.
    const store = roles.includes('projections') || roles.includes('api') ? await openStore(config, logger) : null;
    if (store && roles.includes('projections')) {
      const projectionLogger = logger.child({ role: 'projections' });
      const { log, codec } = services;
      const projections = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store, logger: projectionLogger });
      // After the processors (pushed before): the projections write what they produced last.
      stops.push(() => projections.stop());
    }
    // Last: the projections and the API (stopped first, unshifted) are done with it.
    if (store) stops.push(() => store.close());
    if (store && roles.includes('api')) {
      const apiLogger = logger.child({ role: 'api' });
      const api = createApi({ log: services.log, store, startedAt: Date.now(), logger: apiLogger });
      const server = api.app.listen(config.PORT);
      await new Promise<void>((resolve) => server.once('listening', resolve));
      logger.info({ port: config.PORT }, 'API listening');
      stops.unshift(async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await api.close();
      });
      // A convenience for a first look at the API: the service runs on without it.
      await ensureDemoKey({ log: services.log, codec: services.codec, dataDir: config.TQA_DATA_DIR, stdout, logger: apiLogger }).catch(
        (err: unknown) => apiLogger.error({ err }, 'demo API key not created'),
      );
    }
    if (roles.includes('feeds') && config.TQA_SIM === 'auto') {
      const feedLogger = logger.child({ role: 'feeds' });
      const abort = new AbortController();
      const feed = (async () => {
        const dataDir = config.TQA_DATA_DIR;
        if (!(await loadSimState(dataDir))) {
          feedLogger.info({ days: config.TQA_SIM_DAYS, seed: config.TQA_SIM_SEED }, 'empty data dir: seeding simulated history');
          const seeded = await seedHistory({
            log: services.log,
            codec: services.codec,
            dataDir,
            seed: config.TQA_SIM_SEED,
            days: config.TQA_SIM_DAYS,
            endMs: Date.now(),
            signal: abort.signal,
          });
          feedLogger.info({ records: seeded.records, byTopic: seeded.byTopic }, 'simulated history seeded');
        }
        if (!abort.signal.aborted) {
          await runLive({ log: services.log, codec: services.codec, dataDir, speed: config.TQA_SIM_SPEED, signal: abort.signal });
        }
      })().catch((err: unknown) => feedLogger.error({ err }, 'simulated feed stopped'));
      // Stop the feed first, so processors drain what it produced last.
      stops.unshift(async () => {
        abort.abort();
        await feed;
      });
    }
    logger.info({ roles, mode: config.TQA_LOG, dataDir: config.TQA_DATA_DIR }, 'service started');

    // Graceful shutdown: stop taking requests, let processors finish their batch and checkpoint.
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGTERM', () => resolve('SIGTERM'));
      process.once('SIGINT', () => resolve('SIGINT'));
    });
    logger.info({ signal }, 'stopping');
    for (const stop of stops) await stop();
    await services.close();
    logger.info('stopped');
    return 0;
  },
};
