import type { Processor } from './runtime/processor.ts';

/** Every processor the service runs, in pipeline order. Each gets its own runtime and consumer group. */
export const PROCESSORS: Processor<unknown>[] = [];
