import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { scoresStage } from '../../processors/scores/scores.ts';
import { catalogueTopic, TOPICS } from '../../schemas/catalogue.ts';
import type { DeadLetter, FeatureSnapshot, QuantSnapshot } from '../../schemas/records.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { committed, handOverMidway, runWhileUpstreamsWrite, decodedTopic, stageRuntime as runtime, StageWorlds, toEnd, upstreamsToEnd } from '../helpers/stage-runs.ts';

/**
 * The scores stage through the real runtime and file log, a task per partition, joined to the
 * engine by its watermark: run while the engine writes, and taken over midway by another
 * runtime, it writes the very records, in the same order per partition, that it writes when
 * started after the engine has finished. (That those are the records the engine wrote before
 * the stage existed, per partition, the signal digest in processors/analogs/analogs.test.ts
 * shows for the signals they lead to.)
 */

const worlds = new StageWorlds();

/**
 * Every record the stage writes, per topic in offset order per partition: key, event time and
 * bytes; of the compacted latest-snapshot topic, which the log compacts when it will, the last
 * record per key.
 */
async function stageRecords(log: EventLog): Promise<string[]> {
  const records: string[] = [];
  for (const topic of scoresStage.outputs) {
    const lines = (await readTopic(log, topic)).map((r) => ({ key: r.key!, line: `${topic} ${r.partition} ${r.key} ${r.timestamp} ${r.value!.toString('base64')}` }));
    if (catalogueTopic(topic)?.cleanupPolicy !== 'compact') records.push(...lines.map((l) => l.line));
    else records.push(...[...new Map(lines.map((l) => [l.key, l.line])).values()].sort());
  }
  return records;
}

let reference: string[];

beforeAll(async () => {
  const w = await worlds.world();
  await upstreamsToEnd(w, scoresStage);
  const stage = runtime(w, scoresStage, { maxBatchRecords: 5000 });
  void stage.start();
  await toEnd(stage, 'the scores stage');
  reference = await stageRecords(w.log);
  // A quant snapshot for every feature snapshot, and signals fired and ended.
  const features = await w.log.endOffsets(TOPICS.features.name);
  const snapshots = await w.log.endOffsets(TOPICS.snapshots.name);
  expect(snapshots.map((e) => e.offset)).toEqual(features.map((e) => e.offset));
  const statuses = (await decodedTopic<Signal>(w, TOPICS.signalDrafts.name)).map((d) => d.status);
  expect(statuses).toContain('active');
  expect(statuses).toContain('ended');
}, 300_000);

afterAll(async () => {
  await worlds.close();
});

describe('the scores stage, joined to the engine by watermark', () => {
  it('writes the same records while the engine writes its feature snapshots as after it has finished', async () => {
    const w = await worlds.world();
    await runWhileUpstreamsWrite(w, scoresStage);
    expect(await stageRecords(w.log)).toEqual(reference);
  }, 300_000);

  it('writes the same records when another runtime takes it over midway', async () => {
    const w = await worlds.world();
    const handedOver = await handOverMidway(w, scoresStage, TOPICS.features.name);
    const total = (await w.log.endOffsets(TOPICS.features.name)).reduce((sum, e) => sum + e.offset, 0);
    expect(handedOver.get(TOPICS.features.name)).toBeLessThan(total);
    expect(await stageRecords(w.log)).toEqual(reference);
  }, 300_000);

  it("follows the engine's durable outputs between the engine's checkpoints", async () => {
    const w = await worlds.world();
    // An engine that saves no checkpoint before it stops: only its progress commits tell the stage how far it is.
    const engine = runtime(w, quantEngine, { maxBatchRecords: 300, checkpointIntervalMs: 3_600_000, backlogRecords: Number.MAX_SAFE_INTEGER });
    const stage = runtime(w, scoresStage, { maxBatchRecords: 300 });
    void engine.start();
    void stage.start();
    await waitFor(() => engine.caughtUp(), 'the engine', 180_000);
    await waitFor(() => stage.caughtUp(), 'the stage to reach the engine without its checkpoint', 60_000);
    expect(await committed(w.log, quantEngine.name, TOPICS.market.name)).toBe(0);
    await engine.stop();
    await toEnd(stage, 'the scores stage');
    expect(await stageRecords(w.log)).toEqual(reference);
  }, 300_000);

  it('sends a poison record in its inputs to ops.dead-letters with the reason, and goes on', async () => {
    const w = await worlds.world();
    await upstreamsToEnd(w, scoresStage);
    const [feature] = await readTopic(w.log, TOPICS.features.name);
    const decoded = (await w.codec.decode(TOPICS.features.name, feature.value!)) as FeatureSnapshot;
    // One record that decodes but fails validation, one that is not Avro; both at the first snapshot's time.
    await w.log.append(TOPICS.features.name, [{ key: feature.key, value: await w.codec.encode(TOPICS.features.name, { ...decoded, ts: -1 }), timestamp: feature.timestamp }]);
    await w.log.append(TOPICS.scoreInputs.name, [{ key: feature.key, value: Buffer.from('not avro at all'), timestamp: feature.timestamp }]);
    const stage = runtime(w, scoresStage, { maxBatchRecords: 5000 });
    void stage.start();
    await toEnd(stage, 'the scores stage');
    expect(stage.stats.deadLettered).toBe(2);
    const letters = await decodedTopic<DeadLetter>(w, TOPICS.deadLetters.name);
    expect(letters.map((l) => `${l.stage} ${l.source}`).sort()).toEqual([`${scoresStage.name} ${TOPICS.features.name}`, `${scoresStage.name} ${TOPICS.scoreInputs.name}`]);
    expect(letters.find((l) => l.source === TOPICS.features.name)?.reason).toContain('ts');
    expect(letters.find((l) => l.source === TOPICS.scoreInputs.name)?.reason).toContain('wire format');
    expect(await stageRecords(w.log)).toEqual(reference);
    expect((await decodedTopic<QuantSnapshot>(w, TOPICS.snapshots.name))[0].snapshotId).toBe(decoded.snapshotId);
  }, 300_000);
});
