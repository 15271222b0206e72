import { join } from 'node:path';
import { PROCESSORS } from '../../processors/index.ts';
import { CheckpointStore } from '../../processors/runtime/checkpoints.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import type { Role } from './role.ts';

/** One processor in its own consumer group, checkpointing under the data dir. */
function processorRole(processor: Processor<unknown>): Role {
  return {
    name: processor.name,
    async start({ config, logger, services }) {
      const runtime = new ProcessorRuntime({
        processor,
        log: services.log,
        codec: services.codec,
        checkpoints: new CheckpointStore(join(config.TQA_DATA_DIR, 'state')),
        logger,
        checkpointIntervalMs: config.TQA_CHECKPOINT_INTERVAL_MS,
        checkpointSaveShare: config.TQA_CHECKPOINT_SAVE_SHARE,
      });
      runtime.start().catch((err: unknown) => logger.fatal({ err, processor: processor.name }, 'processor stopped'));
      return { stop: () => runtime.stop() };
    },
  };
}

/** Each processor's role by processor name: the processors role runs each on a thread of its own. */
export const processorRoles: Record<string, Role> = Object.fromEntries(PROCESSORS.map((p) => [p.name, processorRole(p)]));
