import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import { KafkaEventLog } from '../../infra/log/kafka/kafka-log.ts';
import type { EventLog } from '../../infra/log/port.ts';
import { startMockBroker, type MockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import { startSchemaRegistryServer, type SchemaRegistryServer } from '../../infra/peers/schema-registry-server.ts';
import { ConfluentSchemaRegistry } from '../../infra/registry/confluent.ts';
import { waitFor } from '../../infra/wait.ts';
import { outcomesStage } from '../../processors/outcomes/outcomes.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { CATALOGUE, TOPICS } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { runEngineToEnd } from '../helpers/pipeline.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';

/**
 * The outcomes stage's tasks over two members of its consumer group on the Kafka mock broker,
 * joined to the engine by its commits: the engine stops midway, a second member joins, the
 * first leaves and hands its partitions over, the engine goes on in a new runtime. The records
 * equal those of one task per partition in one runtime on the file log (repeats of a handover
 * carry the same record, so they are compared as distinct records).
 */

const WORLD = { seed: 808, days: 1, endMs: Date.UTC(2026, 4, 1), tokens: 12, authors: 100 };

async function outcomes(log: EventLog, codec: Codec): Promise<string[]> {
  const records = await readTopic(log, TOPICS.outcomes.name);
  const decoded = await Promise.all(records.map(async (r) => `${r.key} ${r.timestamp} ${JSON.stringify(await codec.decode(TOPICS.outcomes.name, r.value!))}`));
  return [...new Set(decoded)].sort();
}

async function committed(log: EventLog, topic: string): Promise<number> {
  return (await log.committedOffsets(outcomesStage.name, topic)).reduce((sum, c) => sum + c.offset, 0);
}

describe('the outcomes stage over two members of its group on the Kafka mock broker', () => {
  let broker: MockBroker;
  let registry: SchemaRegistryServer;
  const dirs: string[] = [];
  const logs: KafkaEventLog[] = [];
  let reference: string[];

  const kafkaLog = (clientId: string) => {
    const log = new KafkaEventLog({ brokers: [broker.brokers], clientId, idempotent: false, logger: pino({ level: 'silent' }), sessionTimeoutMs: 6_000 });
    logs.push(log);
    return log;
  };

  beforeAll(async () => {
    [broker, registry] = await Promise.all([startMockBroker(), startSchemaRegistryServer()]);
    const dir = await mkdtemp(join(tmpdir(), 'tqa-outcomes-ref-'));
    dirs.push(dir);
    const local = await openEmbedded(dir);
    await seedHistory({ log: local.log, codec: local.codec, dataDir: dir, ...WORLD });
    await runEngineToEnd(dir, local.log, local.codec);
    reference = await outcomes(local.log, local.codec);
    await local.log.close();
  }, 300_000);

  afterAll(async () => {
    for (const log of logs) await log.close();
    await Promise.all([broker?.stop(), registry?.close()]);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('writes the records one runtime writes, with its partitions moved between members midway', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-outcomes-kafka-'));
    dirs.push(dir);
    const log = kafkaLog('outcomes-test');
    await log.ensureTopics(CATALOGUE);
    const codec = new Codec(new ConfluentSchemaRegistry(registry.url));
    await codec.registerTopics(CATALOGUE.map((t) => t.name));
    await seedHistory({ log, codec, dataDir: dir, ...WORLD });

    // Members of one machine share the checkpoint dir: a member taking a partition over resumes from its checkpoint.
    const runtime = (processor: typeof outcomesStage | typeof quantEngine, clientId: string, options: { checkpointIntervalMs: number; maxBatchRecords: number }) =>
      new ProcessorRuntime<unknown>({ processor, log: kafkaLog(clientId), codec, checkpoints: new FileCheckpoints(join(dir, 'state')), logger: silentLogger, ...options });
    const engine = runtime(quantEngine, 'engine', { checkpointIntervalMs: 200, maxBatchRecords: 500 });
    const first = runtime(outcomesStage, 'stage-1', { checkpointIntervalMs: 100, maxBatchRecords: 200 });
    const second = runtime(outcomesStage, 'stage-2', { checkpointIntervalMs: 100, maxBatchRecords: 200 });
    void engine.start();
    void first.start();
    const ticks = (await log.endOffsets(TOPICS.market.name)).reduce((sum, e) => sum + e.offset, 0);
    await waitFor(async () => (await committed(log, TOPICS.market.name)) > 0, 'the first stage member to commit', 120_000);
    // The engine stops first: the stage cannot go past what it committed, so there is work to hand over.
    await engine.stop();
    void second.start();
    await first.stop();
    const handedOver = await committed(log, TOPICS.market.name);
    const rest = runtime(quantEngine, 'engine-again', { checkpointIntervalMs: 200, maxBatchRecords: 500 });
    void rest.start();
    await waitFor(() => rest.caughtUp(), 'the restarted engine', 180_000);
    await rest.stop();
    await waitFor(async () => (await committed(log, TOPICS.market.name)) >= ticks && (await second.caughtUp()), 'the second member to finish', 180_000);
    await second.stop();

    expect(handedOver).toBeLessThan(ticks);
    expect(second.stats.processed).toBeGreaterThan(0);
    expect(reference.length).toBeGreaterThan(1_000);
    expect(await outcomes(log, codec)).toEqual(reference);
  }, 600_000);
});
