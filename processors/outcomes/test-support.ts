import { TOPICS } from '../../schemas/catalogue.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import type { InputRecord, OutputRecord, ProcessorContext } from '../runtime/processor.ts';
import { outcomesStage } from './outcomes.ts';

/**
 * The quant engine and the outcomes stage as one in-memory pipeline, for tests that run the
 * engine without a log: each input goes to the engine, then its subjects and the input itself
 * (ticks, token metadata) to the stage, which is the order the runtime's watermark join gives
 * (a subject is timed between the engine's previous input and this one). One stage state
 * serves every token: a token's outcomes depend on its own records only.
 */
export function engineWithOutcomes(): { process(record: InputRecord, ctx: ProcessorContext): void } {
  const engine = quantEngine.createState(0);
  const stage = outcomesStage.createState(0);
  return {
    process(record, ctx) {
      const subjects: OutputRecord[] = [];
      quantEngine.process(engine, record, {
        eventTime: ctx.eventTime,
        watermark: ctx.watermark,
        id: (prefix, ...parts) => ctx.id(prefix, ...parts),
        reject: (reason) => ctx.reject(reason),
        emit(output) {
          if (output.topic === TOPICS.outcomeSubjects.name) subjects.push(output);
          ctx.emit(output);
        },
      });
      for (const s of subjects) outcomesStage.process(stage, { topic: s.topic, partition: 0, offset: 0, key: s.key, timestamp: s.timestamp, value: s.value }, ctx);
      if (outcomesStage.inputs.includes(record.topic)) outcomesStage.process(stage, record, ctx);
    },
  };
}
