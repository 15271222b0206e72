import { beforeAll, describe, expect, it } from 'vitest';
import { Simulator, type SimRecord } from '../../infra/feeds/sim/engine.ts';
import { engineWithStages } from '../../processors/test-support.ts';
import type { OutputRecord } from '../../processors/runtime/processor.ts';
import { deterministicId } from '../../processors/runtime/runtime.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { AuthorCall, AuthorMetrics, Outcome } from '../../schemas/records.ts';

const DAY = 86_400_000;

function simulate(days: number): SimRecord[] {
  const sim = Simulator.start({ seed: 314_159, tokens: 60, authors: 400, startMs: Date.UTC(2026, 2, 2) });
  const records: SimRecord[] = [];
  const end = sim.clockMs + days * DAY;
  while (sim.clockMs < end) records.push(...sim.step());
  return records;
}

/** The engine and the outcomes stage, which emits the outcome records the engine resolves. */
function run(records: SimRecord[]): OutputRecord[] {
  const pipeline = engineWithStages();
  const outputs: OutputRecord[] = [];
  const ctx = {
    eventTime: 0,
    watermark: 0,
    id: deterministicId,
    emit: (output: OutputRecord) => outputs.push(output),
    reject: (reason: string) => {
      throw new Error(reason);
    },
  };
  records.forEach((record, offset) => pipeline.process({ ...record, partition: 0, offset }, ctx));
  return outputs;
}

describe('quant engine, point in time', () => {
  let records: SimRecord[];
  let outputs: OutputRecord[];
  beforeAll(() => {
    records = simulate(3);
    outputs = run(records);
  });

  it('never changes an output already emitted when later events are appended', () => {
    const firstTwoDays = records.filter((r) => r.timestamp < records[0].timestamp + 2 * DAY);
    const prefix = run(firstTwoDays);
    expect(prefix.length).toBeGreaterThan(1000);
    expect(JSON.stringify(outputs.slice(0, prefix.length))).toBe(JSON.stringify(prefix));
  });

  it('emits outcomes only after their horizon and builds author metrics only from outcomes resolved before them', () => {
    const authorOfCall = new Map<string, string>();
    for (const output of outputs) {
      if (output.topic === TOPICS.calls.name) {
        const call = output.value as AuthorCall;
        authorOfCall.set(call.callId, call.authorId);
      }
    }
    // Every resolution, by event time: the outcomes stage writes them after the engine used them.
    const resolvedAt = new Map<string, number[]>(); // author → resolution times of 24h call outcomes
    for (const output of outputs) {
      if (output.topic !== TOPICS.outcomes.name) continue;
      const outcome = output.value as Outcome;
      expect(outcome.resolvedAt).toBeGreaterThan(outcome.subjectTs);
      expect(output.timestamp).toBe(outcome.resolvedAt);
      if (outcome.subjectKind === 'call' && outcome.horizon === '24h') {
        const author = authorOfCall.get(outcome.subjectId)!;
        resolvedAt.set(author, [...(resolvedAt.get(author) ?? []), outcome.resolvedAt]);
      }
    }
    let metricsChecked = 0;
    for (const output of outputs) {
      if (output.topic !== TOPICS.authorMetrics.name) continue;
      const metrics = output.value as AuthorMetrics;
      const known = (resolvedAt.get(metrics.authorId) ?? []).filter((t) => t < metrics.ts).length;
      expect(metrics.resolvedCalls).toBeLessThanOrEqual(known);
      metricsChecked++;
    }
    expect(metricsChecked).toBeGreaterThan(50);
  });
});
