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
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { CATALOGUE, TOPICS } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { runQuantToEnd } from '../helpers/pipeline.ts';
import { inputInHalves, readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';

/**
 * The outcomes stage's tasks over members of its consumer group on the Kafka mock broker,
 * joined to the engine by its commits, each member with a data dir of its own: a member that
 * takes a task over restores its state from the stage's changelog. The input comes in two
 * halves by event time: over the first, a second member joins and the first leaves, handing
 * its partitions over; the second half is appended and the engine and the second member go
 * on. The records equal those of one task per partition in one runtime on the file log
 * (repeats of a handover carry the same record, so they are compared as distinct records).
 * Then three members at once, on a broker of their own: the partitions do not split evenly
 * between them, yet each holds whole tasks.
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

describe('the outcomes stage over members of its group on the Kafka mock broker', () => {
  let broker: MockBroker;
  let registry: SchemaRegistryServer;
  const dirs: string[] = [];
  const logs: KafkaEventLog[] = [];
  let reference: string[];
  let local: Awaited<ReturnType<typeof openEmbedded>>;

  const kafkaLog = (clientId: string, on: MockBroker = broker) => {
    const log = new KafkaEventLog({ brokers: [on.brokers], clientId, idempotent: false, logger: pino({ level: 'silent' }), sessionTimeoutMs: 6_000 });
    logs.push(log);
    return log;
  };

  beforeAll(async () => {
    [broker, registry] = await Promise.all([startMockBroker(), startSchemaRegistryServer()]);
    const dir = await mkdtemp(join(tmpdir(), 'tqa-outcomes-ref-'));
    dirs.push(dir);
    local = await openEmbedded(dir);
    await seedHistory({ log: local.log, codec: local.codec, dataDir: dir, ...WORLD });
    await runQuantToEnd(dir, local.log, local.codec);
    reference = await outcomes(local.log, local.codec);
  }, 300_000);

  afterAll(async () => {
    await local?.log.close();
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
    // The reference's input, in two halves by event time: the engine, and with it the stage,
    // can get no further than the first until the second is appended.
    const history = await inputInHalves(local, { log, codec });
    await history.appendFirst();

    const runtime = (processor: Processor<unknown>, clientId: string) => {
      const memberLog = kafkaLog(clientId);
      // The engine keeps its state whole in a dir the runs share; each stage member, a store of its own and the changelog.
      const checkpoints = processor === quantEngine ? new FileCheckpoints(join(dir, 'state')) : localCheckpoints(join(dir, clientId), processor, silentLogger, memberLog);
      return new ProcessorRuntime<unknown>({ processor, log: memberLog, codec, checkpoints, logger: silentLogger, checkpointIntervalMs: 100, maxBatchRecords: 300 });
    };
    const engine = runtime(quantEngine, 'engine');
    const first = runtime(outcomesStage, 'stage-1');
    const second = runtime(outcomesStage, 'stage-2');
    void engine.start();
    void first.start();
    const firstHalf = (await log.endOffsets(TOPICS.market.name)).reduce((sum, e) => sum + e.offset, 0);
    await waitFor(async () => (await committed(log, TOPICS.market.name)) > 0, 'the first stage member to commit', 120_000);
    void second.start();
    await first.stop();
    // The engine reads none of the second half before all of it is there: an input read to its
    // end does not hold the others back, so one topic's records read before the next's are appended would change the order.
    await engine.stop();
    await history.appendRest();
    const ticks = (await log.endOffsets(TOPICS.market.name)).reduce((sum, e) => sum + e.offset, 0);
    const resumed = runtime(quantEngine, 'engine-resumed');
    void resumed.start();
    await waitFor(() => resumed.caughtUp(), 'the engine', 180_000);
    await resumed.stop();
    await waitFor(async () => (await committed(log, TOPICS.market.name)) >= ticks && (await second.caughtUp()), 'the second member to finish', 180_000);
    await second.stop();

    expect(firstHalf).toBeLessThan(ticks);
    // The second member did the second half, and took the first's partitions over from the
    // changelog of its checkpoints: it did not handle the whole input again.
    let stageInput = 0;
    for (const topic of outcomesStage.inputs) for (const e of await log.endOffsets(topic)) stageInput += e.offset;
    expect(second.stats.processed).toBeGreaterThan(ticks - firstHalf);
    expect(second.stats.processed).toBeLessThan(stageInput);
    expect(reference.length).toBeGreaterThan(1_000);
    expect(await outcomes(log, codec)).toEqual(reference);
  }, 600_000);

  it('writes the records one runtime writes over three members at once, each holding whole tasks', async () => {
    // Three members and four partitions: kafkajs's round robin over topic-partitions gave a
    // task's inputs to different members, and every such task waited for good.
    const own = await startMockBroker();
    const logsBefore = logs.length;
    const dir = await mkdtemp(join(tmpdir(), 'tqa-outcomes-three-'));
    dirs.push(dir);
    try {
      const log = kafkaLog('outcomes-three', own);
      await log.ensureTopics(CATALOGUE);
      const codec = new Codec(new ConfluentSchemaRegistry(registry.url));
      await codec.registerTopics(CATALOGUE.map((t) => t.name));
      for (const topic of quantEngine.inputs) {
        const records = await readTopic(local.log, topic);
        const values = await Promise.all(records.map(async (r) => ({ key: r.key, timestamp: r.timestamp, value: await codec.encode(topic, await local.codec.decode(topic, r.value!)) })));
        if (values.length > 0) await log.append(topic, values);
      }
      const runtime = (processor: Processor<unknown>, clientId: string) => {
        const memberLog = kafkaLog(clientId, own);
        const checkpoints = processor === quantEngine ? new FileCheckpoints(join(dir, 'state')) : localCheckpoints(join(dir, clientId), processor, silentLogger, memberLog);
        return new ProcessorRuntime<unknown>({ processor, log: memberLog, codec, checkpoints, logger: silentLogger, checkpointIntervalMs: 100 });
      };
      const engine = runtime(quantEngine, 'engine');
      const members = [1, 2, 3].map((n) => runtime(outcomesStage, `stage-${n}`));
      void engine.start();
      for (const member of members) void member.start();
      const ticks = (await log.endOffsets(TOPICS.market.name)).reduce((sum, e) => sum + e.offset, 0);
      await waitFor(() => engine.caughtUp(), 'the engine', 180_000);
      await waitFor(async () => (await committed(log, TOPICS.market.name)) >= ticks, 'the members to commit the whole input', 180_000);
      await Promise.all([engine.stop(), ...members.map((m) => m.stop())]);

      // Each member took part (four partitions over three), and together they wrote the reference.
      for (const member of members) expect(member.stats.processed).toBeGreaterThan(0);
      expect(await outcomes(log, codec)).toEqual(reference);
    } finally {
      for (const log of logs.splice(logsBefore)) await log.close();
      await own.stop();
    }
  }, 600_000);
});
