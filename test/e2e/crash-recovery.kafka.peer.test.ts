import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { derivedCount, expectKillsLanded, expectSameOutputs, KafkaWorlds, runWithFaults, runWithoutFaults, type World } from './crash-recovery.scenario.ts';

describe('kill -9 of the engine and the projections during a catch-up, on the Kafka protocol broker', () => {
  let worlds: KafkaWorlds;

  beforeAll(async () => {
    worlds = await KafkaWorlds.start();
  });
  afterAll(async () => {
    await worlds?.close();
  });

  async function seededWorld(): Promise<World> {
    // Fetched whole, this world is worked through in a few seconds: a checkpoint at every chunk
    // of outputs.
    return (await worlds.seeded({ killCheckpointMs: 0, standby: true })).world;
  }

  it('loses and changes no derived record and no stored row, whenever the kills land', async () => {
    const reference = await runWithoutFaults(await seededWorld());
    const expected = derivedCount(reference);
    expect(expected).toBeGreaterThan(1000);
    const faulty = await runWithFaults(await seededWorld(), reference);

    expectKillsLanded(faulty, expected);
    await expectNothingDropped(worlds.all());
    expectSameOutputs(faulty.outputs, reference);
  }, 900_000);
});

/** The mock broker deleted no record of any topic: what a comparison of outputs takes for granted. */
async function expectNothingDropped(worlds: World[]): Promise<void> {
  for (const world of worlds) {
    for (const { name } of CATALOGUE) {
      const starts = await world.log.startOffsets(name);
      expect(starts.filter((s) => s.offset > 0), `${name}: records the mock broker dropped (make the world smaller)`).toEqual([]);
    }
  }
}
