import { analogsStage } from './analogs/analogs.ts';
import { outcomesStage } from './outcomes/outcomes.ts';
import { quantEngine } from './quant-engine/engine.ts';
import type { InputRecord, OutputRecord, Processor, ProcessorContext } from './runtime/processor.ts';

/**
 * The quant engine and the stages behind it (outcomes, analogs) as one in-memory pipeline,
 * for tests that run the engine without a log: each input goes to the engine, then the
 * engine's outputs the stages read and the input itself (ticks, token metadata) to each
 * stage, which is the order the runtime's watermark join gives (an output is timed between
 * the engine's previous input and this one). One outcomes-stage state serves every token: a
 * token's outcomes depend on its own records only.
 */
export function engineWithStages(): { process(record: InputRecord, ctx: ProcessorContext): void } {
  const engine = quantEngine.createState(0);
  const stages = ([outcomesStage, analogsStage] as Processor<unknown>[]).map((processor) => ({ processor, state: processor.createState(0) }));
  return {
    process(record, ctx) {
      const outputs: OutputRecord[] = [];
      quantEngine.process(engine, record, {
        eventTime: ctx.eventTime,
        watermark: ctx.watermark,
        id: (prefix, ...parts) => ctx.id(prefix, ...parts),
        reject: (reason) => ctx.reject(reason),
        emit(output) {
          outputs.push(output);
          ctx.emit(output);
        },
      });
      for (const { processor, state } of stages) {
        for (const o of outputs) {
          if (processor.inputs.includes(o.topic)) processor.process(state, { topic: o.topic, partition: 0, offset: 0, key: o.key, timestamp: o.timestamp, value: o.value }, ctx);
        }
        if (processor.inputs.includes(record.topic)) processor.process(state, record, ctx);
      }
    },
  };
}
