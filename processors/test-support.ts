import { QUANT_STAGES } from './index.ts';
import { quantEngine } from './quant-engine/engine.ts';
import type { InputRecord, OutputRecord, ProcessorContext } from './runtime/processor.ts';

/**
 * The quant engine and the stages behind it (outcomes, scores, analogs) as one in-memory
 * pipeline, for tests that run the engine without a log: each input goes to the engine, then
 * to each stage in order the outputs written so far that it reads and the input itself (ticks,
 * token metadata), which is the order the runtime's watermark join gives (an output is timed
 * between the engine's previous input and this one). One state per stage serves every token:
 * a token's outcomes and scores depend on its own records only.
 */
export function engineWithStages(): { process(record: InputRecord, ctx: ProcessorContext): void } {
  const engine = quantEngine.createState(0);
  const stages = QUANT_STAGES.filter((p) => p !== quantEngine).map((processor) => ({ processor, state: processor.createState(0) }));
  return {
    process(record, ctx) {
      const outputs: OutputRecord[] = [];
      const collecting = {
        eventTime: ctx.eventTime,
        watermark: ctx.watermark,
        id: (prefix: string, ...parts: (string | number)[]) => ctx.id(prefix, ...parts),
        reject: (reason: string) => ctx.reject(reason),
        emit(output: OutputRecord) {
          outputs.push(output);
          ctx.emit(output);
        },
      };
      quantEngine.process(engine, record, collecting);
      for (const { processor, state } of stages) {
        // A stage's outputs join the list as it goes, for the stages after it.
        for (const o of outputs.slice()) {
          if (processor.inputs.includes(o.topic)) processor.process(state, { topic: o.topic, partition: 0, offset: 0, key: o.key, timestamp: o.timestamp, value: o.value }, collecting);
        }
        if (processor.inputs.includes(record.topic)) processor.process(state, record, collecting);
      }
    },
  };
}
