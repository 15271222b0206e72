import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { outcomesStage, type OutcomesStageState } from '../../processors/outcomes/outcomes.ts';
import { HOUR, MIN, recordingEmitter, seededRandom, T0, tick, tokenMeta } from '../../processors/quant-engine/tokens/fixtures.ts';
import type { InputRecord, OutputRecord } from '../../processors/runtime/processor.ts';
import { deterministicId } from '../../processors/runtime/runtime.ts';
import { TaskStateStore } from '../../processors/runtime/state/task-store.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { OutcomeSubjectRecord } from '../../schemas/records.ts';

/**
 * The outcomes stage over a task's store on disk (processors/runtime/state): given its input,
 * the records it emits equal those of its state held in Maps, however often the store commits
 * and is reopened; a commit writes the keys the records since the last one changed, not the
 * state; and the subjects the longest horizon has resolved leave the store.
 */

const DAY = 24 * HOUR;
const TOKENS = ['tk_a', 'tk_b', 'tk_c', 'tk_d'];
const DAYS = 9;

/** Four tokens ticking every minute on random walks, a subject per token every 5 minutes, one token rugged on day 3. */
function input(): InputRecord[] {
  const random = seededRandom(7);
  const records: InputRecord[] = [];
  const push = (topic: string, key: string, timestamp: number, value: unknown) => records.push({ topic, partition: 0, offset: records.length, key, timestamp, value });
  for (const tokenId of TOKENS) push(TOPICS.tokens.name, tokenId, T0, tokenMeta(tokenId, tokenId.toUpperCase(), T0));
  const price = TOKENS.map(() => 1);
  for (let t = T0 + MIN; t < T0 + DAYS * DAY; t += MIN) {
    if (t === T0 + 3 * DAY) push(TOPICS.tokens.name, 'tk_c', t, tokenMeta('tk_c', 'TK_C', t, { status: 'rugged' }));
    TOKENS.forEach((tokenId, k) => {
      price[k] *= Math.exp((random() - 0.5) * 0.02);
      push(TOPICS.market.name, tokenId, t, tick(tokenId, t, price[k], { liquidityUsd: 50_000 * (1 + random()) }));
      if ((t - T0) % (5 * MIN) === 0) {
        const subject: OutcomeSubjectRecord = { kind: 'snapshot', subjectId: `snap_${tokenId}_${t}`, tokenId, ts: t, entryPrice: price[k], entryLiquidity: 60_000 };
        push(TOPICS.outcomeSubjects.name, tokenId, t, subject);
      }
    });
  }
  return records;
}

function run(state: OutcomesStageState, records: InputRecord[], out: OutputRecord[]): void {
  const emitter = recordingEmitter();
  const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: emitter.emit, reject: () => expect.unreachable() };
  for (const record of records) outcomesStage.process(state, record, ctx);
  out.push(...emitter.outputs);
}

describe('the outcomes stage over a task store', () => {
  let dir: string;
  const records = input();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-outcomes-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('emits what the state in Maps emits, with the store committed and reopened at every 10,000 records', async () => {
    const inMaps: OutputRecord[] = [];
    run(outcomesStage.createState(0), records, inMaps);

    const file = join(dir, 'outcomes.lmdb');
    const fromStore: OutputRecord[] = [];
    for (let from = 0; from < records.length; from += 10_000) {
      const { store } = await TaskStateStore.open(file, outcomesStage.stateVersion);
      run(outcomesStage.createState(0, store), records.slice(from, from + 10_000), fromStore);
      store.commit({ positions: { 'in#0': from + 10_000 }, maxEventTime: records[Math.min(from + 10_000, records.length) - 1].timestamp });
      await store.close();
    }
    // At least the 6 horizons of the subjects of the first 2 days, which the 7 d horizon has passed.
    expect(inMaps.length).toBeGreaterThan(TOKENS.length * 12 * 24 * 2 * 6);
    expect(inMaps.some((o) => (o.value as { died: boolean }).died)).toBe(true);
    expect(fromStore).toEqual(inMaps);
  });

  it('commits only the keys the records since the last commit changed, and keeps no block of subjects every horizon resolved', async () => {
    const { store } = await TaskStateStore.open(join(dir, 'outcomes.lmdb'), outcomesStage.stateVersion);
    const state = outcomesStage.createState(0, store);
    const out: OutputRecord[] = [];
    const end = records.findIndex((r) => r.timestamp >= T0 + 8 * DAY);
    run(state, records.slice(0, end), out);
    const whole = store.commit({ positions: {}, maxEventTime: records[end - 1].timestamp }).keysWritten;
    const blocks = [...store.table('outcomes-subjects').entries()].length;

    // The next minute: a tick of each token, and a subject of each (on the 5-minute grid).
    const minute = records.slice(end, records.findIndex((r) => r.timestamp > records[end].timestamp));
    const [firstTick] = minute.filter((r) => r.topic === TOPICS.market.name);
    run(state, [firstTick], out);
    // Its token, whose value holds the open chunks of its deques of extremes (here none fills and is sealed).
    expect(store.commit({ positions: {}, maxEventTime: firstTick.timestamp }).keysWritten).toBe(1);

    const subject = minute.find((r) => r.topic === TOPICS.outcomeSubjects.name)!;
    run(state, [subject], out);
    // Its block of subjects, the queue, its token, the latest subject ids.
    expect(store.commit({ positions: {}, maxEventTime: subject.timestamp }).keysWritten).toBe(4);

    // Subjects waiting for the 7 d horizon (and the block in progress), not 8 days of them.
    const waiting = TOKENS.length * 12 * 24 * 7;
    expect(blocks).toBeLessThanOrEqual(Math.ceil(waiting / 256) + 1);
    expect(whole).toBeGreaterThan(blocks);
    await store.close();
  });
});
