import { join } from 'node:path';
import { PROCESSORS } from '../../processors/index.ts';
import { CheckpointStore } from '../../processors/runtime/checkpoints.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import type { Role } from './role.ts';

/** Every processor, each in its own consumer group, checkpointing under the data dir. */
export const processorsRole: Role = {
  name: 'processors',
  async start({ config, logger, services }) {
    const checkpoints = new CheckpointStore(join(config.TQA_DATA_DIR, 'state'));
    const runtimes = PROCESSORS.map((processor) => {
      const runtime = new ProcessorRuntime({
        processor,
        log: services.log,
        codec: services.codec,
        checkpoints,
        logger,
        checkpointIntervalMs: config.TQA_CHECKPOINT_INTERVAL_MS,
        checkpointSaveShare: config.TQA_CHECKPOINT_SAVE_SHARE,
      });
      runtime.start().catch((err: unknown) => logger.fatal({ err, processor: processor.name }, 'processor stopped'));
      return runtime;
    });
    return { stop: async () => void (await Promise.all(runtimes.map((r) => r.stop()))) };
  },
};
