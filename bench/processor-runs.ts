import { join } from 'node:path';
import { processorOnThreads } from '../cli/roles/processor-threads.ts';
import { openLogServices, type LogServices } from '../infra/bootstrap.ts';
import type { Config } from '../infra/config.ts';
import type { EventLog } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { localCheckpoints } from '../processors/runtime/checkpoints/keyed.ts';
import type { Processor } from '../processors/runtime/processor.ts';
import { ProcessorRuntime } from '../processors/runtime/runtime.ts';

/**
 * Runs a processor from offset 0 to the end of its input in this thread, as `tqa start`
 * configures it; `atEnd` runs once it is caught up, before it stops (while it still holds
 * every task's state).
 */
export async function runToEnd<AtEnd = undefined>(
  processor: Processor<unknown>,
  config: Config,
  services: LogServices,
  logger: Logger,
  atEnd?: () => AtEnd,
): Promise<{ seconds: number; processed: number; produced: number; atEnd: AtEnd | undefined }> {
  const runtime = processorRuntime(processor, config, services, logger);
  const start = performance.now();
  void runtime.start();
  while (!(await runtime.caughtUp())) await new Promise((resolve) => setTimeout(resolve, 100));
  const seconds = (performance.now() - start) / 1000;
  const measured = atEnd?.();
  await runtime.stop();
  return { seconds, processed: runtime.stats.processed, produced: runtime.stats.produced, atEnd: measured };
}

/** A runtime of the processor in this thread over the data dir's local state, as `tqa start` configures it. */
export function processorRuntime(processor: Processor<unknown>, config: Config, services: LogServices, logger: Logger): ProcessorRuntime<unknown> {
  return new ProcessorRuntime({
    processor,
    log: services.log,
    codec: services.codec,
    checkpoints: localCheckpoints(join(config.TQA_DATA_DIR, 'state'), processor, logger),
    logger,
    maxBatchRecords: 5000,
    // As `tqa start` runs it: the cost of checkpointing a growing state is part of the rate.
    checkpointIntervalMs: config.TQA_CHECKPOINT_INTERVAL_MS,
    checkpointSaveShare: config.TQA_CHECKPOINT_SAVE_SHARE,
  });
}

/** Records the processor's group is behind its inputs' ends, summed over every input partition. */
export async function lagOf(log: EventLog, processor: Processor<unknown>): Promise<number> {
  let lag = 0;
  for (const topic of processor.inputs) {
    const committed = await log.committedOffsets(processor.name, topic);
    for (const { partition, offset } of await log.endOffsets(topic)) lag += Math.max(0, offset - (committed.find((c) => c.partition === partition)?.offset ?? 0));
  }
  return lag;
}

/**
 * Whether each processor's group has committed every input partition to its end (its saved
 * state covers it all). In order, upstream first: a stage is at its end only once the
 * processors upstream of it are.
 */
export async function committedToEnd(log: EventLog, processors: Processor<unknown>[]): Promise<boolean> {
  for (const processor of processors) if ((await lagOf(log, processor)) > 0) return false;
  return true;
}

/**
 * Runs the processors on worker threads of their own, as `tqa start` does, over the log in
 * `config`'s data dir, until every one has committed its inputs to their ends; seconds from
 * the threads' start (loading the code into a new thread, 0.5 s or so, is not their work),
 * and the CPU seconds this process used meanwhile, every thread of it (the stages' threads,
 * V8's garbage-collection helpers, libuv's file-system pool); startedAt and endedAt on the
 * performance.now clock, to time runs that overlap.
 */
export async function onThreadsToEnd(
  config: Config,
  processors: Processor<unknown>[],
  logger: Logger,
): Promise<{ seconds: number; processCpuSeconds: number; startedAt: number; endedAt: number }> {
  const services = await openLogServices(config, logger);
  const context = { config, logger, services, store: () => Promise.reject(new Error('no store here')), stdout: process.stdout };
  const running = await Promise.all(processors.map((p) => processorOnThreads(p).start(context)));
  const start = performance.now();
  const cpuAtStart = process.cpuUsage();
  try {
    while (!(await committedToEnd(services.log, processors))) await new Promise((resolve) => setTimeout(resolve, 100));
    const cpu = process.cpuUsage(cpuAtStart);
    const end = performance.now();
    return { seconds: (end - start) / 1000, processCpuSeconds: (cpu.user + cpu.system) / 1e6, startedAt: start, endedAt: end };
  } finally {
    await Promise.all(running.map((r) => r.stop()));
    await services.close();
  }
}
