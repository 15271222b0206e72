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
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { changelogTopic } from '../../processors/runtime/state/changelog.ts';
import { scoresStage } from '../../processors/scores/scores.ts';
import { CATALOGUE, TOPICS } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { runQuantToEnd } from '../helpers/pipeline.ts';
import { inputInHalves, readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';

/**
 * The scores stage's tasks moving between two members of its group on the Kafka mock broker,
 * each member with a data dir of its own: the second restores the tasks' state from the
 * changelog (processors/runtime/state/changelog.ts), not from a shared volume, and the records
 * equal those of one runtime on the file log (repeats of a handover carry the same record, so
 * they are compared as distinct records).
 */

const WORLD = { seed: 909, days: 1, endMs: Date.UTC(2026, 4, 1), tokens: 12, authors: 100 };

async function scoresOutputs(log: EventLog, codec: Codec): Promise<string[]> {
  const lines: string[] = [];
  for (const topic of [TOPICS.snapshots.name, TOPICS.signalDrafts.name, TOPICS.analogInputs.name]) {
    for (const r of await readTopic(log, topic)) lines.push(`${topic} ${r.key} ${r.timestamp} ${JSON.stringify(await codec.decode(topic, r.value!))}`);
  }
  return [...new Set(lines)].sort();
}

describe('the scores stage moved between members with data dirs of their own, on the Kafka mock broker', () => {
  let broker: MockBroker;
  let registry: SchemaRegistryServer;
  const dirs: string[] = [];
  const logs: KafkaEventLog[] = [];
  let local: Awaited<ReturnType<typeof openEmbedded>>;
  let reference: string[];

  const tempDir = async (name: string) => {
    const dir = await mkdtemp(join(tmpdir(), `tqa-scores-${name}-`));
    dirs.push(dir);
    return dir;
  };
  const kafkaLog = (clientId: string) => {
    const log = new KafkaEventLog({ brokers: [broker.brokers], clientId, idempotent: false, logger: pino({ level: 'silent' }), sessionTimeoutMs: 6_000 });
    logs.push(log);
    return log;
  };

  beforeAll(async () => {
    [broker, registry] = await Promise.all([startMockBroker(), startSchemaRegistryServer()]);
    const dir = await tempDir('reference');
    local = await openEmbedded(dir);
    await seedHistory({ log: local.log, codec: local.codec, dataDir: dir, ...WORLD });
    await runQuantToEnd(dir, local.log, local.codec);
    reference = await scoresOutputs(local.log, local.codec);
  }, 300_000);

  afterAll(async () => {
    await local?.log.close();
    for (const log of logs) await log.close();
    await Promise.all([broker?.stop(), registry?.close()]);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('restores the tasks from the changelog in the second member and writes the records one runtime writes', async () => {
    const log = kafkaLog('scores-test');
    await log.ensureTopics(CATALOGUE);
    const codec = new Codec(new ConfluentSchemaRegistry(registry.url));
    await codec.registerTopics(CATALOGUE.map((t) => t.name));
    const history = await inputInHalves(local, { log, codec });
    await history.appendFirst();

    const engineState = join(await tempDir('engine'), 'state');
    const engineRuntime = (name: string) =>
      new ProcessorRuntime<unknown>({ processor: quantEngine, log: kafkaLog(name), codec, checkpoints: new FileCheckpoints(engineState), logger: silentLogger, checkpointIntervalMs: 100 });
    const engine = engineRuntime('engine');
    const member = async (name: string) => {
      const memberLog = kafkaLog(name);
      const checkpoints = localCheckpoints(join(await tempDir(name), 'state'), scoresStage, silentLogger, memberLog);
      return new ProcessorRuntime<unknown>({ processor: scoresStage, log: memberLog, codec, checkpoints, logger: silentLogger, checkpointIntervalMs: 100, maxBatchRecords: 300 });
    };
    const first = await member('stage-1');
    const second = await member('stage-2');
    void engine.start();
    void first.start();
    const changelog = changelogTopic(scoresStage).name;
    // A task checkpoints once it has input: in this world no token hashes to partition 0.
    await waitFor(
      async () => {
        const withInput = (await log.endOffsets(TOPICS.features.name)).filter((p) => p.offset > 0).map((p) => p.partition);
        const changelogEnds = new Map((await log.endOffsets(changelog)).map((p) => [p.partition, p.offset]));
        return withInput.length > 0 && withInput.every((p) => (changelogEnds.get(p) ?? 0) > 1); // past its claim
      },
      'the first member to checkpoint every task with input',
      120_000,
    );
    await first.stop();
    void second.start();
    // The engine reads none of the second half before all of it is there: an input read to its
    // end does not hold the others back, so one topic's records read before the next's are appended would change the order.
    await engine.stop();
    await history.appendRest();
    const resumed = engineRuntime('engine-resumed');
    void resumed.start();
    await waitFor(() => resumed.caughtUp(), 'the engine', 180_000);
    await resumed.stop();
    await waitFor(() => second.caughtUp(), 'the second member to finish', 180_000);
    await second.stop();

    // The second member went on from the first's checkpoints: it did not handle the whole input again.
    let stageInput = 0;
    for (const topic of scoresStage.inputs) for (const e of await log.endOffsets(topic)) stageInput += e.offset;
    expect(first.stats.processed).toBeGreaterThan(0);
    expect(second.stats.processed).toBeLessThan(stageInput);
    expect(reference.length).toBeGreaterThan(1_000);
    expect(await scoresOutputs(log, codec)).toEqual(reference);
  }, 600_000);
});
