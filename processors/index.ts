import { analogsStage } from './analogs/analogs.ts';
import { outcomesStage } from './outcomes/outcomes.ts';
import { publicEvents } from './public-events/public-events.ts';
import { quantEngine } from './quant-engine/engine.ts';
import type { Processor } from './runtime/processor.ts';
import { scoresStage } from './scores/scores.ts';

/** The quant engine and the stages that took its work over, upstream first: what replaces the single-task engine. */
export const QUANT_STAGES: Processor<unknown>[] = [quantEngine, outcomesStage, scoresStage, analogsStage];

/** Every processor the service runs, upstream first. Each gets its own runtime and consumer group. */
export const PROCESSORS: Processor<unknown>[] = [...QUANT_STAGES, publicEvents];
