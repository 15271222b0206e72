import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createApp } from '../../../api/app.ts';
import { PROCESSORS } from '../../../processors/index.ts';
import { CheckpointStore } from '../../../processors/runtime/checkpoints.ts';
import { ProcessorRuntime } from '../../../processors/runtime/runtime.ts';
import { openLogServices } from '../../bootstrap.ts';
import type { CliCommand } from '../command.ts';
import { UsageError } from '../command.ts';

const ROLES = ['api', 'processors'] as const;
type Role = (typeof ROLES)[number];

export const startCommand: CliCommand = {
  name: 'start',
  summary: 'run the service: every role, or the ones named with --roles',
  usage: `tqa start [--roles ${ROLES.join(',')}]`,
  async run(args, { config, logger }) {
    const { values } = parseArgs({ args, options: { roles: { type: 'string', default: ROLES.join(',') } } });
    const roles = values.roles.split(',').map((r) => r.trim());
    const unknown = roles.filter((r) => !ROLES.includes(r as Role));
    if (unknown.length > 0) throw new UsageError(`unknown role ${unknown.join(', ')}; roles are ${ROLES.join(', ')}`);

    const services = await openLogServices(config, logger);
    const stops: (() => Promise<void>)[] = [];
    if (roles.includes('processors')) {
      const checkpoints = new CheckpointStore(join(config.TQA_DATA_DIR, 'state'));
      for (const processor of PROCESSORS) {
        const runtime = new ProcessorRuntime({ processor, log: services.log, codec: services.codec, checkpoints, logger });
        runtime.start().catch((err: unknown) => logger.fatal({ err, processor: processor.name }, 'processor stopped'));
        stops.push(() => runtime.stop());
      }
    }
    if (roles.includes('api')) {
      const app = createApp({ log: services.log, startedAt: Date.now(), logger: logger.child({ role: 'api' }) });
      const server = app.listen(config.PORT);
      await new Promise<void>((resolve) => server.once('listening', resolve));
      logger.info({ port: config.PORT }, 'API listening');
      stops.unshift(() => new Promise<void>((resolve) => server.close(() => resolve())));
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
