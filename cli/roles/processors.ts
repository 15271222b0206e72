import { join } from 'node:path';
import type { Config } from '../../infra/config.ts';
import type { PartitionShare } from '../../infra/log/port.ts';
import { Reopenable } from '../../infra/reopenable.ts';
import { PROCESSORS } from '../../processors/index.ts';
import { CachedCheckpoints } from '../../processors/runtime/checkpoints/cached.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import type { CheckpointStore } from '../../processors/runtime/checkpoints/port.ts';
import { StoreCheckpoints } from '../../processors/runtime/checkpoints/store.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { failureReporter, type Role, type RoleContext } from './role.ts';

/** Where processor checkpoints are kept: TQA_CHECKPOINTS, by default `store` with ClickHouse. */
export function checkpointsKept(config: Config): 'local' | 'store' {
  return config.TQA_CHECKPOINTS ?? (config.TQA_STORE === 'clickhouse' ? 'store' : 'local');
}

/** Keyed state moves between processes through its changelog on Kafka, never as a blob. */
function movesByChangelog(processor: Processor<unknown>, logKind: string): boolean {
  return processor.keyedState === true && logKind === 'kafka';
}

/**
 * Whether some processor keeps its checkpoints in the store, so that the processors role needs
 * it: with TQA_CHECKPOINTS=store, every processor whose state does not move by its changelog.
 */
export function checkpointsInStore(config: Config, logKind: string): boolean {
  return checkpointsKept(config) === 'store' && PROCESSORS.some((processor) => !movesByChangelog(processor, logKind));
}

/**
 * Under the data dir; with TQA_CHECKPOINTS=store (the default with ClickHouse) also in the
 * store, so that a processors process on another machine resumes a task it takes over. A
 * keyed processor on Kafka keeps its store in the data dir and its changelog in the log instead.
 */
function checkpointsOf({ config, logger, store, services }: RoleContext, processor: Processor<unknown>): CheckpointStore {
  const dir = join(config.TQA_DATA_DIR, 'state');
  if (movesByChangelog(processor, services.log.kind)) return localCheckpoints(dir, processor, logger, services.log);
  if (checkpointsKept(config) === 'local') return localCheckpoints(dir, processor, logger);
  const files = new FileCheckpoints(dir);
  const shared = new Reopenable(async () => new StoreCheckpoints(await store()));
  // The group commits only what a saved checkpoint covers: no commit, no checkpoint anywhere.
  const everSaved = async () => {
    for (const topic of processor.inputs) {
      if ((await services.log.committedOffsets(processor.name, topic)).some((c) => c.offset > 0)) return true;
    }
    return false;
  };
  return new CachedCheckpoints(files, () => shared.get(), everSaved, logger);
}

/**
 * One processor in its own consumer group; `share`, the partitions this role takes of a
 * processor with a task per partition on the file log (where roles on several threads split them).
 */
export function processorRole(name: string, share?: PartitionShare): Role {
  const processor = PROCESSORS.find((p) => p.name === name);
  if (!processor) throw new Error(`no processor named ${name}`);
  return {
    name: share ? `${processor.name} ${share.index + 1}/${share.count}` : processor.name,
    async start(ctx) {
      const { config, logger, services } = ctx;
      const checkpoints = checkpointsOf(ctx, processor);
      const runtime = new ProcessorRuntime({
        processor,
        log: services.log,
        codec: services.codec,
        checkpoints,
        logger,
        checkpointIntervalMs: config.TQA_CHECKPOINT_INTERVAL_MS,
        checkpointSaveShare: config.TQA_CHECKPOINT_SAVE_SHARE,
        share,
        // Each single-task processor a slot of its own, so that they spread over the processes running them.
        exclusiveSlot: PROCESSORS.filter((p) => p.parallelism === 'single').indexOf(processor),
      });
      // Stopped for good while the service runs on, its lag would only grow.
      const failure = failureReporter(ctx.failed);
      runtime.start().catch((err: unknown) => {
        logger.fatal({ err, processor: processor.name }, 'processor stopped');
        failure.report(err);
      });
      return {
        async stop() {
          failure.stopping();
          await runtime.stop();
          // The checkpoint saved on stop reaches the store before the process ends.
          if (checkpoints instanceof CachedCheckpoints) await checkpoints.flush();
        },
      };
    },
  };
}
