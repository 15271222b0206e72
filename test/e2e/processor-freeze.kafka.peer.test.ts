import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSameOutputs, KafkaWorlds, runThroughProcessorFreeze, runWithoutFaults } from './crash-recovery.scenario.ts';

/** Over three session timeouts (6 s): the group expires the frozen member and re-balances well before it resumes. */
const FREEZE_MS = 20_000;

describe('a processors process frozen for 20 s or more while a second one runs, on the Kafka protocol broker', () => {
  let worlds: KafkaWorlds;

  beforeAll(async () => {
    worlds = await KafkaWorlds.start();
  });
  afterAll(async () => {
    await worlds?.close();
  });

  const seededWorld = async () => (await worlds.seeded({ killCheckpointMs: 0, standby: true })).world;

  it('the other takes the engine over, the frozen one goes on once resumed and stops cleanly, and the outputs equal a run without the freeze', async () => {
    const reference = await runWithoutFaults(await seededWorld());
    const frozen = await runThroughProcessorFreeze(await seededWorld(), FREEZE_MS);

    expect(frozen.engineDoneAtFreeze, 'the process froze while the engine had input left').toBe(false);
    expectSameOutputs(frozen.outputs, reference);
  }, 900_000);
});
