import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import { KafkaEventLog } from '../../infra/log/kafka/kafka-log.ts';
import { ConfluentSchemaRegistry } from '../../infra/registry/confluent.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { startFakeSchemaRegistry, type FakeSchemaRegistry } from '../helpers/fake-schema-registry.ts';
import { startMockBroker, type MockBroker } from '../helpers/kafka-mock-broker.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { derivedCount, expectKillsLanded, expectSameOutputs, killStartedRoles, runWithFaults, runWithoutFaults, type World } from './crash-recovery.scenario.ts';

// Small enough for the mock broker, which keeps about 5 MB per partition, also with the
// outputs the kills make the engine repeat (at 20 tokens quant.snapshots outgrew it, and a
// restarted processor found input it needed deleted).
const WORLD = { seed: 31, days: 1, endMs: Date.UTC(2026, 4, 1), tokens: 10, authors: 100 };
const SESSION_TIMEOUT_MS = 6_000;

describe('kill -9 of the engine and the projections during a catch-up, on the Kafka protocol broker', () => {
  let registry: FakeSchemaRegistry;
  const brokers: MockBroker[] = [];
  const worlds: World[] = [];

  beforeAll(async () => {
    registry = await startFakeSchemaRegistry();
  });
  afterAll(async () => {
    await killStartedRoles();
    for (const world of worlds) {
      await world.log.close();
      await rm(world.dir, { recursive: true, force: true });
    }
    await Promise.all([...brokers.map((b) => b.stop()), registry?.close()]);
  });

  /** A world on a broker of its own (the mock's topics are global), seeded by this process. */
  async function seededWorld(): Promise<World> {
    const broker = await startMockBroker();
    brokers.push(broker);
    const dir = await mkdtemp(join(tmpdir(), 'tqa-crash-kafka-'));
    const log = new KafkaEventLog({ brokers: [broker.brokers], clientId: 'crash-test', idempotent: false, logger: silentLogger, sessionTimeoutMs: SESSION_TIMEOUT_MS });
    await log.ensureTopics(CATALOGUE);
    const codec = new Codec(new ConfluentSchemaRegistry(registry.url));
    await codec.registerTopics(CATALOGUE.map((t) => t.name));
    const env = {
      TQA_DATA_DIR: dir,
      TQA_LOG: 'kafka',
      KAFKA_BROKERS: broker.brokers,
      KAFKA_IDEMPOTENT: 'false',
      KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      SCHEMA_REGISTRY_URL: registry.url,
    };
    // Fetched whole, this world is worked through in a few seconds: a checkpoint at every chunk
    // of outputs.
    const world = { dir, log, codec, env, killCheckpointMs: 0, standby: true };
    worlds.push(world);
    await seedHistory({ log, codec, dataDir: dir, ...WORLD });
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
