import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { startSchemaRegistryServer, type SchemaRegistryServer } from '../../infra/peers/schema-registry-server.ts';
import type { MockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import {
  derivedCount,
  expectKillsLanded,
  expectSameOutputs,
  killStartedRoles,
  runWithFaults,
  runWithoutFaults,
  seededKafkaWorld,
  type World,
} from './crash-recovery.scenario.ts';

describe('kill -9 of the engine and the projections during a catch-up, on the Kafka protocol broker', () => {
  let registry: SchemaRegistryServer;
  const brokers: MockBroker[] = [];
  const worlds: World[] = [];

  beforeAll(async () => {
    registry = await startSchemaRegistryServer();
  });
  afterAll(async () => {
    await killStartedRoles();
    for (const world of worlds) {
      await world.log.close();
      await rm(world.dir, { recursive: true, force: true });
    }
    await Promise.all([...brokers.map((b) => b.stop()), registry?.close()]);
  });

  async function seededWorld(): Promise<World> {
    // Fetched whole, this world is worked through in a few seconds: a checkpoint at every chunk
    // of outputs.
    const { world, broker } = await seededKafkaWorld(registry.url, { killCheckpointMs: 0, standby: true });
    brokers.push(broker);
    worlds.push(world);
    return world;
  }

  it('loses and changes no derived record and no stored row, whenever the kills land', async () => {
    const reference = await runWithoutFaults(await seededWorld());
    const expected = derivedCount(reference);
    expect(expected).toBeGreaterThan(1000);
    const faulty = await runWithFaults(await seededWorld(), reference);

    expectKillsLanded(faulty, expected);
    await expectNothingDropped(worlds);
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
