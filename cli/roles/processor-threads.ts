import { availableParallelism } from 'node:os';
import type { PartitionShare } from '../../infra/log/port.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { catalogueTopic } from '../../schemas/catalogue.ts';
import type { Role } from './role.ts';
import { together } from './together.ts';
import { onWorkerThread } from './worker-thread.ts';

const PROCESSOR_MODULE = new URL('./processors.ts', import.meta.url);

/**
 * A processor on worker threads of its own. One whose single task reads every partition
 * (the quant engine) runs on one; one with a task per partition (the outcomes stage) on
 * TQA_STAGE_THREADS (one per core by default, at most its partition count): on the file log
 * each thread takes a share of the partitions, on Kafka each is a member of the group and the
 * coordinator spreads the partitions.
 */
export function processorOnThreads(processor: Processor<unknown>): Role {
  if (processor.parallelism === 'single') {
    return onWorkerThread(processor.name, PROCESSOR_MODULE, 'processorRole', { args: [processor.name], background: true });
  }
  return {
    name: processor.name,
    start(ctx) {
      const partitions = Math.max(...processor.inputs.map((topic) => catalogueTopic(topic)?.partitions ?? 1));
      const count = Math.min(ctx.config.TQA_STAGE_THREADS ?? availableParallelism(), partitions);
      const threads = Array.from({ length: count }, (_, index) => {
        const share: PartitionShare | undefined = ctx.config.TQA_LOG === 'embedded' ? { index, count } : undefined;
        return onWorkerThread(`${processor.name} ${index + 1}/${count}`, PROCESSOR_MODULE, 'processorRole', { args: [processor.name, share], background: true });
      });
      return together(processor.name, threads, { stopAtOnce: true }).start(ctx);
    },
  };
}
