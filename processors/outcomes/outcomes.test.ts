import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Simulator } from '../../infra/feeds/sim/engine.ts';
import { partitionForKey } from '../../infra/log/partitioner.ts';
import { PARTITIONS, TOPICS } from '../../schemas/catalogue.ts';
import type { Outcome, OutcomeSubjectRecord } from '../../schemas/records.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import { HOUR, MIN, recordingEmitter, T0, tick, tokenMeta } from '../quant-engine/tokens/fixtures.ts';
import type { InputRecord, OutputRecord } from '../runtime/processor.ts';
import { deterministicId } from '../runtime/runtime.ts';
import { outcomesStage, type OutcomesStageState } from './outcomes.ts';

/** Given the stage's state and the records it gets in order, the records it emits. */
function given(state: OutcomesStageState, records: [string, { ts: number }][]): OutputRecord[] {
  const emitter = recordingEmitter();
  const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: emitter.emit, reject: () => expect.unreachable() };
  let offset = 0;
  for (const [topic, value] of records) outcomesStage.process(state, { topic, partition: 0, offset: offset++, key: null, timestamp: value.ts, value }, ctx);
  return emitter.outputs;
}

function subject(ts: number, over: Partial<OutcomeSubjectRecord> = {}): OutcomeSubjectRecord {
  return { kind: 'call', subjectId: `call_${ts}`, tokenId: 'tk_1', ts, entryPrice: 10, entryLiquidity: 50_000, ...over };
}

const outcomesOf = (outputs: OutputRecord[]) => outputs.filter((o) => o.topic === TOPICS.outcomes.name).map((o) => o.value as Outcome);

describe('outcomes stage', () => {
  it('emits a subject\'s outcome at each horizon from its token\'s later ticks, timed at its resolution', () => {
    const state = outcomesStage.createState(0);
    const outputs = given(state, [
      [TOPICS.tokens.name, tokenMeta('tk_1', 'AAA', T0)],
      [TOPICS.outcomeSubjects.name, subject(T0)],
      [TOPICS.market.name, tick('tk_1', T0 + 5 * MIN, 12)],
      [TOPICS.market.name, tick('tk_1', T0 + 10 * MIN, 9)],
      [TOPICS.market.name, tick('tk_1', T0 + 2 * HOUR, 11)],
    ]);
    const [quarter, hour] = outcomesOf(outputs);
    expect(outputs.map((o) => o.timestamp)).toEqual([T0 + 15 * MIN, T0 + HOUR]);
    expect(quarter).toMatchObject({ subjectId: `call_${T0}`, horizon: '15m', forwardReturn: expect.closeTo(-0.1), maxDrawdown: expect.closeTo(-0.1), peakReturn: expect.closeTo(0.2), died: false });
    expect(hour).toMatchObject({ horizon: '1h', lastPrice: 9, resolvedAt: T0 + HOUR });
  });

  it('takes the entry liquidity the engine recorded: a pool drained below a tenth of it died', () => {
    const state = outcomesStage.createState(0);
    const outputs = given(state, [
      [TOPICS.outcomeSubjects.name, subject(T0, { entryLiquidity: 1_000_000 })],
      [TOPICS.market.name, { ...tick('tk_1', T0 + 5 * MIN, 10), liquidityUsd: 50_000 }],
      [TOPICS.market.name, tick('tk_1', T0 + 20 * MIN, 10)],
    ]);
    expect(outcomesOf(outputs)[0]).toMatchObject({ horizon: '15m', died: true });
  });

  it('drops a subject the engine repeats after a crash, older or at the latest time', () => {
    const once = outcomesStage.createState(0);
    const twice = outcomesStage.createState(0);
    const a = subject(T0, { subjectId: 'a' });
    const b = subject(T0 + MIN, { subjectId: 'b' });
    const c = subject(T0 + MIN, { subjectId: 'c' });
    const end = tick('tk_1', T0 + 8 * 24 * HOUR, 10);
    const single = given(once, [[TOPICS.outcomeSubjects.name, a], [TOPICS.outcomeSubjects.name, b], [TOPICS.outcomeSubjects.name, c], [TOPICS.market.name, end]]);
    const repeated = given(twice, [a, b, a, b, c, b, c].map((s): [string, { ts: number }] => [TOPICS.outcomeSubjects.name, s]).concat([[TOPICS.market.name, end]]));
    expect(outcomesOf(single)).toHaveLength(3 * 6);
    expect(repeated).toEqual(single);
  });

  it('per token partition, emits exactly the outcome records the single-task engine emitted before the stage existed', () => {
    const endMs = Date.UTC(2026, 5, 1);
    const sim = Simulator.start({ seed: 5, tokens: 60, authors: 400, startMs: endMs - 3 * 24 * HOUR });
    const raw: InputRecord[] = [];
    while (sim.clockMs < endMs) for (const r of sim.step()) raw.push({ topic: r.topic, partition: 0, offset: 0, key: r.key, timestamp: r.timestamp, value: r.value });
    // The engine's merge: event time, then its input order.
    const engineOrder = quantEngine.inputs as string[];
    raw.sort((x, y) => x.timestamp - y.timestamp || engineOrder.indexOf(x.topic) - engineOrder.indexOf(y.topic));
    const engineState = quantEngine.createState(0);
    const engineOut = recordingEmitter();
    const engineCtx = { eventTime: 0, watermark: 0, id: deterministicId, emit: engineOut.emit, reject: () => undefined };
    for (const r of raw) quantEngine.process(engineState, r, engineCtx);
    const subjects = engineOut.outputs.filter((o) => o.topic === TOPICS.outcomeSubjects.name);
    expect(engineOut.outputs.some((o) => o.topic === TOPICS.outcomes.name)).toBe(false);

    // One task per partition, merged as the runtime does: event time, then the stage's input order.
    const digest = createHash('sha256');
    const counts: number[] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const inPartition = (key: string | null) => partitionForKey(key!, PARTITIONS) === p;
      const inputs: InputRecord[] = [
        ...raw.filter((r) => r.topic !== TOPICS.posts.name && inPartition(r.key)),
        ...subjects.filter((s) => inPartition(s.key)).map((s) => ({ topic: s.topic, partition: p, offset: 0, key: s.key, timestamp: s.timestamp, value: s.value })),
      ];
      const stageOrder = outcomesStage.inputs as string[];
      inputs.sort((x, y) => x.timestamp - y.timestamp || stageOrder.indexOf(x.topic) - stageOrder.indexOf(y.topic));
      const state = outcomesStage.createState(p);
      const out = recordingEmitter();
      const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: out.emit, reject: () => expect.unreachable() };
      for (const r of inputs) outcomesStage.process(state, r, ctx);
      counts.push(out.outputs.length);
      digest.update(String(out.outputs.length));
      for (const o of out.outputs) digest.update(JSON.stringify([o.key, o.timestamp, o.value]));
    }
    // Taken from the engine of the commit before the split, over the same world and merge,
    // its quant.outcomes records in order per partition (key, timestamp, value).
    expect(counts).toEqual([54_291, 28_964, 33_767, 27_797]);
    expect(digest.digest('hex')).toBe('44f4154a20b7de607e0ba28889c4d9ecfdde8c2662fc3ceb2b416bae30a0b793');
  });
});
