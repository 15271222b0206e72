import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectSameOutputs, KafkaWorlds, runThroughBrokerPause, runWithoutFaults } from './crash-recovery.scenario.ts';

/**
 * Longer than the session timeout (6 s) and kafkajs's request timeout (30 s): requests in
 * flight time out, connections are dropped and made again, and the groups' members expire.
 */
const PAUSE_MS = 40_000;

describe('the Kafka broker frozen for 40 s during a catch-up', () => {
  let worlds: KafkaWorlds;

  beforeAll(async () => {
    worlds = await KafkaWorlds.start();
  });
  afterAll(async () => {
    await worlds?.close();
  });

  const seededWorld = () => worlds.seeded({ killCheckpointMs: 0, standby: false });

  it('resumes without a restart or an operator, and derives and stores exactly what a run without the pause does', async () => {
    const reference = await runWithoutFaults((await seededWorld()).world);
    const { world, broker } = await seededWorld();
    const paused = await runThroughBrokerPause(world, broker, PAUSE_MS);

    expect(paused.engineDoneAtPause, 'the broker froze while the engine had input left').toBe(false);
    expect(paused.runningAfter).toEqual(['engine', 'projections']);
    expectSameOutputs(paused.outputs, reference);
  }, 900_000);
});
