import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Simulator } from '../../infra/feeds/sim/engine.ts';
import { seededRandom } from '../../infra/feeds/sim/prng.ts';
import { partitionForKey } from '../../infra/log/partitioner.ts';
import { PARTITIONS, TOPICS } from '../../schemas/catalogue.ts';
import type { AnalogInputsRecord, OutcomeSubjectRecord } from '../../schemas/records.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import { HOUR, MIN, recordingEmitter, T0, tick, tokenMeta } from '../quant-engine/tokens/fixtures.ts';
import type { InputRecord, OutputRecord, Processor } from '../runtime/processor.ts';
import { deterministicId } from '../runtime/runtime.ts';
import { scoresStage } from '../scores/scores.ts';
import { analogsStage, type AnalogsStageState } from './analogs.ts';

/** Given the stage's state and the records it gets in order, the records it emits. */
function given(state: AnalogsStageState, records: [string, { ts: number }][]): Signal[] {
  const emitter = recordingEmitter();
  const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: emitter.emit, reject: () => expect.unreachable() };
  let offset = 0;
  for (const [topic, value] of records) analogsStage.process(state, { topic, partition: 0, offset: offset++, key: null, timestamp: value.ts, value }, ctx);
  return emitter.outputs.map((o) => o.value as Signal);
}

const DAY = 24 * HOUR;
const SCORES = { momentum: 50, conviction: null, crowding: 20, early_quality: 70, narrative_velocity: 40, divergence: null, smart_cohort: null };

/** A tracked snapshot's vector inputs, as the engine writes them beside its subject. */
function vector(tokenId: string, ts: number, momentum: number): AnalogInputsRecord {
  const { crowding, early_quality, narrative_velocity } = SCORES;
  const [priceChange1h, volumeAcceleration, liquidityUsd] = [0.01, 1, 100_000];
  return { snapshotId: `snap_${tokenId}_${ts}`, tokenId, ts, momentum, crowding, earlyQuality: early_quality, narrativeVelocity: narrative_velocity, priceChange1h, volumeAcceleration, liquidityUsd };
}

function subjectOf(s: AnalogInputsRecord): OutcomeSubjectRecord {
  return { kind: 'snapshot', subjectId: s.snapshotId, tokenId: s.tokenId, ts: s.ts, entryPrice: 10, entryLiquidity: 100_000 };
}

function draft(tokenId: string, ts: number, status: 'active' | 'ended' = 'active', firedAt = ts): Signal {
  const ended = status === 'ended';
  return {
    signalId: `sig_${tokenId}${firedAt}`,
    type: 'EARLY_ACCELERATION',
    label: 'Early acceleration',
    ruleVersion: 'early_acceleration@1',
    status,
    firedAt,
    endedAt: ended ? ts : null,
    endReason: ended ? 'max_age' : null,
    strength: 50,
    scores: { ...SCORES },
    why: [],
    conditions: [],
    features: { price_change_1h: 0.01, volume_acceleration: 1, liquidity_usd: 100_000 },
    analogs: null,
    tokenId,
    priorFirings: 0,
    priorSignalIds: [],
    version: ended ? 2 : 1,
    ts,
  };
}

/** Two tokens' snapshots every 2 hours for two days, each tracked, with ticks for their outcomes. */
function history(): [string, { ts: number }][] {
  const records: [string, { ts: number }][] = [
    [TOPICS.tokens.name, tokenMeta('tk_a', 'AAA', T0)],
    [TOPICS.tokens.name, tokenMeta('tk_b', 'BBB', T0)],
  ];
  for (let ts = T0 + 2 * HOUR; ts <= T0 + 2 * DAY; ts += 2 * HOUR) {
    for (const [tokenId, price] of [['tk_a', 10 + (ts / HOUR) % 3], ['tk_b', 20 - (ts / HOUR) % 5]] as const) {
      const v = vector(tokenId, ts, (ts / HOUR) % 100);
      records.push([TOPICS.market.name, tick(tokenId, ts - MIN, price)], [TOPICS.analogInputs.name, v], [TOPICS.outcomeSubjects.name, subjectOf(v)]);
    }
  }
  return records;
}

describe('analogs stage', () => {
  it("fills in a firing's summary from the snapshots whose 24 h outcome resolved before it, and copies it into the ended record", () => {
    const state = analogsStage.createState(0);
    const early = given(state, [...history().filter(([, v]) => v.ts <= T0 + DAY), [TOPICS.signalDrafts.name, draft('tk_a', T0 + DAY + 5 * MIN)]]);
    // A day in, no snapshot is 24 h old yet (the first resolve at T0 + 26 h).
    expect(early.map((s) => s.analogs)).toEqual([null]);

    const later = given(state, [
      ...history().filter(([, v]) => v.ts > T0 + DAY),
      [TOPICS.market.name, tick('tk_a', T0 + 2 * DAY + 4 * MIN, 10)],
      [TOPICS.signalDrafts.name, draft('tk_a', T0 + 2 * DAY + 5 * MIN)],
      [TOPICS.signalDrafts.name, draft('tk_a', T0 + 2 * DAY + HOUR, 'ended', T0 + 2 * DAY + 5 * MIN)],
    ]);
    const [fired, ended] = later;
    // Resolved by then: both tokens' snapshots from T0 + 2 h to T0 + 24 h, 12 each; tk_a's own
    // are more than 24 h before the query, so none is excluded.
    expect(fired.analogs).toMatchObject({ n: 24 });
    expect(fired).toEqual({ ...draft('tk_a', T0 + 2 * DAY + 5 * MIN), analogs: fired.analogs });
    expect(ended).toEqual({ ...draft('tk_a', T0 + 2 * DAY + HOUR, 'ended', T0 + 2 * DAY + 5 * MIN), analogs: fired.analogs });
  });

  it('drops drafts, subjects and snapshot vectors an engine repeats after a crash', () => {
    const once = analogsStage.createState(0);
    const twice = analogsStage.createState(0);
    const records = [...history(), [TOPICS.signalDrafts.name, draft('tk_b', T0 + 2 * DAY + 5 * MIN)]] as [string, { ts: number }][];
    const repeated = records.flatMap((r, i) => (i % 7 === 3 ? [r, records[i - 2], r] : [r]));
    repeated.push([TOPICS.signalDrafts.name, draft('tk_b', T0 + 2 * DAY + 5 * MIN)]);
    const single = given(once, records);
    expect(single).toHaveLength(1);
    expect(single[0].analogs).not.toBeNull();
    expect(given(twice, repeated)).toEqual(single);
  });

  it("writes exactly the signal records the single-task engine wrote, in order per partition, behind the scores stage's tasks, whatever the order of records within one time", () => {
    const endMs = Date.UTC(2026, 5, 1);
    const sim = Simulator.start({ seed: 5, tokens: 60, authors: 400, startMs: endMs - 3 * 24 * HOUR });
    const raw: InputRecord[] = [];
    while (sim.clockMs < endMs) for (const r of sim.step()) raw.push({ topic: r.topic, partition: 0, offset: 0, key: r.key, timestamp: r.timestamp, value: r.value });
    const engineState = quantEngine.createState(0);
    const engineOut = recordingEmitter();
    const engineCtx = { eventTime: 0, watermark: 0, id: deterministicId, emit: engineOut.emit, reject: () => undefined };
    for (const r of mergeAsTheRuntime(raw, quantEngine, null)) quantEngine.process(engineState, r, engineCtx);
    const asRead = (outputs: OutputRecord[]) => outputs.map((o) => ({ ...o, partition: 0, offset: 0 }));

    // The scores stage as the runtime runs it: a task, with a state of its own, per partition.
    const scoresOf = (tieBreak: (() => number) | null) => {
      const out = recordingEmitter();
      const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: out.emit, reject: () => expect.unreachable() };
      const states = Array.from({ length: PARTITIONS }, (_, p) => scoresStage.createState(p));
      const read = asRead(engineOut.outputs).filter((r) => scoresStage.inputs.includes(r.topic));
      for (const r of mergeAsTheRuntime(read, scoresStage, tieBreak)) scoresStage.process(states[r.partition], r, ctx);
      return out.outputs;
    };
    const digestOf = (tieBreak: (() => number) | null) => {
      const written = [...raw, ...asRead(engineOut.outputs), ...asRead(scoresOf(tieBreak))].filter((r) => analogsStage.inputs.includes(r.topic));
      const out = recordingEmitter();
      const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: out.emit, reject: () => expect.unreachable() };
      const state = analogsStage.createState(0);
      for (const r of mergeAsTheRuntime(written, analogsStage, tieBreak)) analogsStage.process(state, r, ctx);
      expect(out.outputs.every((o) => o.topic === TOPICS.signals.name)).toBe(true);
      return digestPerPartition(out.outputs);
    };
    // Taken from the engine of the commit before the stage, over the same world and merge,
    // its quant.signals records in order per partition (key, timestamp, value); 290 carry a summary.
    const before = { counts: [148, 70, 119, 105], digest: '1c2baf49e5941b6a0783e9dbdc8bf8135aa001a0fb850951201a94ec02882923' };
    expect(digestOf(null)).toEqual(before);
    // Records of one time reach the stage in whatever order the log's partitions are fetched in.
    expect(digestOf(seededRandom(7))).toEqual(before);
  });
});

/**
 * The records one single task reads, merged as the runtime merges them: each partition of
 * each input in its own order, the earliest head next, ties by input and partition (or, where
 * a record of the upstream's is one of them, at random, as its fetches may land). Records are
 * in the partitions their keys give.
 */
function mergeAsTheRuntime(records: InputRecord[], processor: Processor<unknown>, tieBreak: (() => number) | null): InputRecord[] {
  const inputs = processor.inputs;
  const gated = new Set(processor.upstreams?.flatMap((u) => u.outputs));
  const queues = new Map<string, InputRecord[]>();
  for (const r of records) {
    const partition = partitionForKey(r.key!, PARTITIONS);
    const source = `${String(inputs.indexOf(r.topic)).padStart(2, '0')}#${partition}`;
    if (!queues.has(source)) queues.set(source, []);
    queues.get(source)!.push({ ...r, partition });
  }
  const sources = [...queues.keys()].sort().map((k) => ({ queue: queues.get(k)!, at: 0 }));
  const merged: InputRecord[] = [];
  for (;;) {
    let best: (typeof sources)[number] | null = null;
    for (const s of sources) {
      if (s.at >= s.queue.length) continue;
      const ts = s.queue[s.at].timestamp;
      const bestTs = best ? best.queue[best.at].timestamp : Infinity;
      // Only a record the upstream writes may come before another of its time: the runtime
      // waits for a head from every other input, and takes the first among equals.
      const mayPass = tieBreak !== null && best !== null && (gated.has(s.queue[s.at].topic) || gated.has(best.queue[best.at].topic));
      if (ts < bestTs || (ts === bestTs && mayPass && tieBreak() < 0.5)) best = s;
    }
    if (!best) return merged;
    merged.push(best.queue[best.at++]);
  }
}

function digestPerPartition(outputs: OutputRecord[]): { counts: number[]; digest: string } {
  const digest = createHash('sha256');
  const counts: number[] = [];
  for (let p = 0; p < PARTITIONS; p++) {
    const mine = outputs.filter((o) => partitionForKey(o.key!, PARTITIONS) === p);
    counts.push(mine.length);
    digest.update(String(mine.length));
    for (const o of mine) digest.update(JSON.stringify([o.key, o.timestamp, o.value]));
  }
  return { counts, digest: digest.digest('hex') };
}
