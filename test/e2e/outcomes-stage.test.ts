import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';
import { outcomesStage } from '../../processors/outcomes/outcomes.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { DeadLetter, OutcomeSubjectRecord } from '../../schemas/records.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { committed, handOverMidway, runWhileUpstreamsWrite, decodedTopic, stageRuntime as runtime, StageWorlds, toEnd, upstreamsToEnd } from '../helpers/stage-runs.ts';

/**
 * The outcomes stage through the real runtime and file log, joined to the engine by its
 * watermark. Run while the engine writes (small batches, a commit every few milliseconds, so
 * the stage keeps running into the engine's progress), it writes the very records, in the
 * same order per partition, that it writes when started after the engine has finished; and
 * so does a stage stopped midway whose tasks another runtime takes over, and a stage split
 * over runtimes that each take a share of its partitions (as `tqa start` runs it on threads).
 */

const worlds = new StageWorlds();
const world = () => worlds.world();

/** Every outcome record, in offset order per partition: key, event time and bytes. */
async function outcomeRecords(log: EventLog): Promise<string[]> {
  return (await readTopic(log, TOPICS.outcomes.name)).map((r) => `${r.partition} ${r.key} ${r.timestamp} ${r.value!.toString('base64')}`);
}

let reference: string[];

beforeAll(async () => {
  const w = await world();
  await upstreamsToEnd(w, outcomesStage);
  const stage = runtime(w, outcomesStage, { maxBatchRecords: 5000 });
  void stage.start();
  await toEnd(stage, 'the outcomes stage');
  reference = await outcomeRecords(w.log);
}, 300_000);

afterAll(async () => {
  await worlds.close();
});

describe('the outcomes stage, joined to the engine by watermark', () => {
  it('writes the same records while the engine writes its subjects as after it has finished', async () => {
    expect(reference.length).toBeGreaterThan(10_000);
    const w = await world();
    await runWhileUpstreamsWrite(w, outcomesStage);
    expect(await outcomeRecords(w.log)).toEqual(reference);
  }, 300_000);

  it('writes the same records when another runtime takes its tasks over midway', async () => {
    const w = await world();
    const total = (await w.log.endOffsets(TOPICS.market.name)).reduce((sum, e) => sum + e.offset, 0);
    expect((await handOverMidway(w, outcomesStage, TOPICS.market.name)).get(TOPICS.market.name)).toBeLessThan(total);
    expect(await outcomeRecords(w.log)).toEqual(reference);
  }, 300_000);

  it('writes the same records split over 2 runtimes, then over 4 that take their partitions over midway', async () => {
    const w = await world();
    const total = (await w.log.endOffsets(TOPICS.market.name)).reduce((sum, e) => sum + e.offset, 0);
    const shares = (count: number) => Array.from({ length: count }, (_, index) => runtime(w, outcomesStage, { maxBatchRecords: 200, checkpointIntervalMs: 5, share: { index, count } }));
    const engine = runtime(w, quantEngine, { maxBatchRecords: 300, checkpointIntervalMs: 5 });
    const two = shares(2);
    void engine.start();
    for (const r of two) void r.start();
    await waitFor(async () => (await w.log.committedOffsets(outcomesStage.name, TOPICS.market.name)).length === 4, 'both runtimes to commit their partitions', 180_000);
    await engine.stop();
    await Promise.all(two.map((r) => r.stop()));
    expect(await committed(w.log, outcomesStage.name, TOPICS.market.name)).toBeLessThan(total);
    const rest = runtime(w, quantEngine, { maxBatchRecords: 5000 });
    const four = shares(4);
    void rest.start();
    for (const r of four) void r.start();
    await toEnd(rest, 'the restarted engine');
    await Promise.all(four.map((r, i) => toEnd(r, `stage runtime ${i + 1} of 4`)));
    expect(four.map((r) => r.stats.processed).every((n) => n > 0)).toBe(true);
    expect(await outcomeRecords(w.log)).toEqual(reference);
  }, 300_000);

  it('saves a checkpoint on reaching the end of a backlog of the upstream’s outputs, however far its spacing puts the next one', async () => {
    const w = await world();
    await upstreamsToEnd(w, outcomesStage);
    const stage = runtime(w, outcomesStage, { maxBatchRecords: 5000, checkpointIntervalMs: 600_000, checkpointSaveShare: 1e-9, backlogRecords: 1000 });
    void stage.start();
    await waitFor(() => stage.caughtUp(), 'the outcomes stage', 180_000);
    // Before stop(), which saves anyway: only the end of the backlog can have made the commits.
    for (const topic of outcomesStage.inputs) {
      const ends = (await w.log.endOffsets(topic)).filter((e) => e.offset > 0);
      const commits = await w.log.committedOffsets(outcomesStage.name, topic);
      expect(ends.map((e) => commits.find((c) => c.partition === e.partition)?.offset), topic).toEqual(ends.map((e) => e.offset));
    }
    await stage.stop();
  }, 300_000);

  it('sends a poison record in any of its inputs to ops.dead-letters with the reason, and goes on', async () => {
    const w = await world();
    await upstreamsToEnd(w, outcomesStage);
    const [subject] = await readTopic(w.log, TOPICS.outcomeSubjects.name);
    const decoded = (await w.codec.decode(TOPICS.outcomeSubjects.name, subject.value!)) as OutcomeSubjectRecord;
    // One record that is not Avro, one that decodes but fails validation, in two inputs.
    await w.log.append(TOPICS.outcomeSubjects.name, [{ key: subject.key, value: await w.codec.encode(TOPICS.outcomeSubjects.name, { ...decoded, subjectId: '' }), timestamp: subject.timestamp }]);
    await w.log.append(TOPICS.market.name, [{ key: subject.key, value: Buffer.from('not avro at all'), timestamp: subject.timestamp }]);
    const stage = runtime(w, outcomesStage, { maxBatchRecords: 5000 });
    void stage.start();
    await toEnd(stage, 'the outcomes stage');
    expect(stage.stats.deadLettered).toBe(2);
    const letters = await decodedTopic<DeadLetter>(w, TOPICS.deadLetters.name);
    expect(letters.map((l) => `${l.stage} ${l.source}`).sort()).toEqual([`${outcomesStage.name} ${TOPICS.market.name}`, `${outcomesStage.name} ${TOPICS.outcomeSubjects.name}`]);
    expect(letters.find((l) => l.source === TOPICS.outcomeSubjects.name)?.reason).toContain('subjectId');
    expect(letters.find((l) => l.source === TOPICS.market.name)?.reason).toContain('wire format');
    expect(await outcomeRecords(w.log)).toEqual(reference);
  }, 300_000);
});
