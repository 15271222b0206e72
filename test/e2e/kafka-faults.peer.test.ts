import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import {
  derivedCount,
  expectKillsLanded,
  expectSameOutputs,
  KafkaWorlds,
  runThroughBrokerPause,
  runThroughProcessorFreeze,
  runWithFaults,
  runWithoutFaults,
  type RunOutputs,
  type World,
} from './crash-recovery.scenario.ts';

/**
 * Longer than the session timeout (6 s) and kafkajs's request timeout (30 s): requests in
 * flight time out, connections are dropped and made again, and the groups' members expire.
 */
const BROKER_PAUSE_MS = 40_000;
/** Over three session timeouts (6 s): the group expires the frozen member and re-balances well before it resumes. */
const PROCESSOR_FREEZE_MS = 20_000;

/**
 * Faults during a catch-up on the Kafka protocol broker, each on a world of its own, each
 * compared with the one run of the same world without a fault. Fetched whole, this world is
 * worked through in a few seconds: the engines save a checkpoint at every chunk of outputs.
 */
describe('faults during a catch-up on the Kafka protocol broker', () => {
  let worlds: KafkaWorlds;
  let reference: RunOutputs;

  const seededWorld = async (standby: boolean): Promise<World> => (await worlds.seeded({ killCheckpointMs: 0, standby })).world;

  beforeAll(async () => {
    worlds = await KafkaWorlds.start();
    reference = await runWithoutFaults(await seededWorld(false));
    expect(derivedCount(reference)).toBeGreaterThan(1000);
  }, 600_000);
  afterAll(async () => {
    await worlds?.close();
  });

  it('kill -9 of the engine and the projections loses and changes no derived record and no stored row, whenever the kills land', async () => {
    const faulty = await runWithFaults(await seededWorld(true), reference);

    expectKillsLanded(faulty, derivedCount(reference));
    await expectNothingDropped(worlds.all());
    expectSameOutputs(faulty.outputs, reference);
  }, 900_000);

  it('with the broker frozen for 40 s, every role resumes without a restart or an operator, and derives and stores exactly what a run without the pause does', async () => {
    const { world, broker } = await worlds.seeded({ killCheckpointMs: 0, standby: false });
    const paused = await runThroughBrokerPause(world, broker, BROKER_PAUSE_MS);

    expect(paused.engineDoneAtPause, 'the broker froze while the engine had input left').toBe(false);
    expect(paused.runningAfter).toEqual(['engine', 'projections']);
    expectSameOutputs(paused.outputs, reference);
  }, 900_000);

  it('with a processors process frozen for 20 s while a second one runs, the other takes the engine over, the frozen one goes on once resumed and stops cleanly, and the outputs equal a run without the freeze', async () => {
    const frozen = await runThroughProcessorFreeze(await seededWorld(true), PROCESSOR_FREEZE_MS);

    expect(frozen.engineDoneAtFreeze, 'the process froze while the engine had input left').toBe(false);
    expectSameOutputs(frozen.outputs, reference);
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
