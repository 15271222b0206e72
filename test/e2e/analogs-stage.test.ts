import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../infra/log/port.ts';
import { analogsStage } from '../../processors/analogs/analogs.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { DeadLetter } from '../../schemas/records.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { handOverMidway, runWhileUpstreamsWrite, decodedTopic, stageRuntime as runtime, StageWorlds, toEnd, upstreamsToEnd } from '../helpers/stage-runs.ts';

/**
 * The analogs stage through the real runtime and file log, joined by watermark to the engine
 * and the scores stage: run while they write (small batches, a commit every few milliseconds,
 * so the stage keeps running into their progress), and taken over midway by another runtime,
 * it writes the very signal records, in the same order per partition, that it writes when
 * started after they have finished. (That those are the records the engine
 * wrote before the stage existed, processors/analogs/analogs.test.ts shows.)
 */

const worlds = new StageWorlds();

/** Every signal record, in offset order per partition: key, event time and bytes. */
async function signalRecords(log: EventLog): Promise<string[]> {
  return (await readTopic(log, TOPICS.signals.name)).map((r) => `${r.partition} ${r.key} ${r.timestamp} ${r.value!.toString('base64')}`);
}

let reference: string[];

beforeAll(async () => {
  const w = await worlds.world();
  await upstreamsToEnd(w, analogsStage);
  const stage = runtime(w, analogsStage, { maxBatchRecords: 5000 });
  void stage.start();
  await toEnd(stage, 'the analogs stage');
  reference = await signalRecords(w.log);
  const signals = await decodedTopic<Signal>(w, TOPICS.signals.name);
  // The world is long enough for firings with analogs resolved 24 h before them, and without.
  expect(signals.filter((s) => s.version === 1 && s.analogs !== null).length).toBeGreaterThan(5);
  expect(signals.some((s) => s.version === 1 && s.analogs === null)).toBe(true);
}, 300_000);

afterAll(async () => {
  await worlds.close();
});

describe('the analogs stage, joined to its upstreams by watermark', () => {
  it('writes the same records while the engine and the scores stage write as after they have finished', async () => {
    const w = await worlds.world();
    await runWhileUpstreamsWrite(w, analogsStage);
    expect(await signalRecords(w.log)).toEqual(reference);
  }, 300_000);

  it('writes the same records when another runtime takes it over midway', async () => {
    const w = await worlds.world();
    const total = (await w.log.endOffsets(TOPICS.market.name)).reduce((sum, e) => sum + e.offset, 0);
    // Handed over once it has taken some drafts in, before the end of its input.
    expect((await handOverMidway(w, analogsStage, TOPICS.signalDrafts.name)).get(TOPICS.market.name)).toBeLessThan(total);
    expect(await signalRecords(w.log)).toEqual(reference);
  }, 300_000);

  it('sends a poison record in its inputs to ops.dead-letters with the reason, and goes on', async () => {
    const w = await worlds.world();
    await upstreamsToEnd(w, analogsStage);
    const [draft] = await readTopic(w.log, TOPICS.signalDrafts.name);
    const decoded = (await w.codec.decode(TOPICS.signalDrafts.name, draft.value!)) as Signal;
    // One record that is not Avro, one that decodes but fails validation.
    await w.log.append(TOPICS.signalDrafts.name, [{ key: draft.key, value: await w.codec.encode(TOPICS.signalDrafts.name, { ...decoded, strength: -5 }), timestamp: draft.timestamp }]);
    await w.log.append(TOPICS.analogInputs.name, [{ key: draft.key, value: Buffer.from('not avro at all'), timestamp: draft.timestamp }]);
    const stage = runtime(w, analogsStage, { maxBatchRecords: 5000 });
    void stage.start();
    await toEnd(stage, 'the analogs stage');
    expect(stage.stats.deadLettered).toBe(2);
    const letters = await decodedTopic<DeadLetter>(w, TOPICS.deadLetters.name);
    expect(letters.map((l) => `${l.stage} ${l.source}`).sort()).toEqual([`${analogsStage.name} ${TOPICS.analogInputs.name}`, `${analogsStage.name} ${TOPICS.signalDrafts.name}`]);
    expect(letters.find((l) => l.source === TOPICS.signalDrafts.name)?.reason).toContain('strength');
    expect(letters.find((l) => l.source === TOPICS.analogInputs.name)?.reason).toContain('wire format');
    expect(await signalRecords(w.log)).toEqual(reference);
  }, 300_000);
});
