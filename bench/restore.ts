import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { seedHistory } from '../infra/feeds/sim/runner.ts';
import { KafkaEventLog } from '../infra/log/kafka/kafka-log.ts';
import { startMockBroker } from '../infra/peers/kafka-mock-broker.ts';
import { startSchemaRegistryServer } from '../infra/peers/schema-registry-server.ts';
import { ConfluentSchemaRegistry } from '../infra/registry/confluent.ts';
import { waitFor } from '../infra/wait.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { FileCheckpoints } from '../processors/runtime/checkpoints/files.ts';
import { localCheckpoints } from '../processors/runtime/checkpoints/keyed.ts';
import type { CheckpointStore } from '../processors/runtime/checkpoints/port.ts';
import type { Processor } from '../processors/runtime/processor.ts';
import { ProcessorRuntime } from '../processors/runtime/runtime.ts';
import { changelogTopic } from '../processors/runtime/state/changelog.ts';
import { scoresStage } from '../processors/scores/scores.ts';
import { CATALOGUE } from '../schemas/catalogue.ts';
import { Codec } from '../schemas/codec.ts';
import { inputInHalves } from '../test/helpers/read-topic.ts';
import { openEmbedded } from '../test/helpers/runtime-fixture.ts';
import { report } from './results.ts';

// As many tokens as the default world, over a day: the mock broker keeps about 5 MB per partition.
const WORLD = { seed: 5, days: 1, endMs: Date.UTC(2026, 5, 1), tokens: 20, authors: 150 };
const silent = pino({ level: 'silent' });

/**
 * How fast a keyed task's state moves to a process that lacks it (the scores stage, on the
 * Kafka mock broker). The engine and the stage run over a seeded world, the stage with its
 * changelog; then a process with an empty data dir restores every task of the stage from the
 * changelog, as one taking the tasks over on another machine does. Baseline: the same process
 * rebuilding that state by replaying the stage's input from offset 0, which is what it would
 * do without a changelog.
 */
export async function benchRestore(): Promise<void> {
  const [broker, registry] = await Promise.all([startMockBroker(), startSchemaRegistryServer()]);
  const dirs: string[] = [];
  const logs: KafkaEventLog[] = [];
  const newDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-restore-'));
    dirs.push(dir);
    return dir;
  };
  const kafkaLog = (clientId: string) => {
    const log = new KafkaEventLog({ brokers: [broker.brokers], clientId, idempotent: false, logger: silent });
    logs.push(log);
    return log;
  };
  const codec = new Codec(new ConfluentSchemaRegistry(registry.url));
  const runtime = (processor: Processor<unknown>, log: KafkaEventLog, checkpoints: CheckpointStore) =>
    new ProcessorRuntime<unknown>({ processor, log, codec, checkpoints, logger: silent, maxBatchRecords: 5000 });
  try {
    const seeded = await newDir();
    const local = await openEmbedded(seeded);
    await seedHistory({ log: local.log, codec: local.codec, dataDir: seeded, ...WORLD });
    const log = kafkaLog('bench-restore');
    await log.ensureTopics(CATALOGUE);
    await codec.registerTopics(CATALOGUE.map((t) => t.name));
    const history = await inputInHalves(local, { log, codec }, CATALOGUE.map((t) => t.name));
    await history.appendFirst();
    await history.appendRest();
    await local.log.close();

    const engine = runtime(quantEngine, kafkaLog('engine'), new FileCheckpoints(join(await newDir(), 'state')));
    const stageLog = kafkaLog('stage');
    const stage = runtime(scoresStage, stageLog, localCheckpoints(join(await newDir(), 'state'), scoresStage, silent, stageLog));
    void engine.start();
    void stage.start();
    await waitFor(async () => (await engine.caughtUp()) && (await stage.caughtUp()), 'the engine and the scores stage to process the world', 300_000);
    await Promise.all([engine.stop(), stage.stop()]);
    const tasks = (await log.endOffsets(scoresStage.inputs[0])).map((p) => p.partition);
    const changelogRecords = (await log.endOffsets(changelogTopic(scoresStage).name)).reduce((sum, p) => sum + p.offset, 0);

    // What a takeover on another machine does before its first record: every task from the changelog.
    const restoringLog = kafkaLog('restoring');
    const restoring = localCheckpoints(join(await newDir(), 'state'), scoresStage, silent, restoringLog);
    const taskMs: number[] = [];
    for (const task of tasks) {
      const started = performance.now();
      await restoring.load(scoresStage.name, task);
      taskMs.push(performance.now() - started);
    }
    const restoreMs = taskMs.reduce((sum, ms) => sum + ms, 0);
    // The log's reader of the changelog joins a consumer group of its own at its first read (kafkajs reads no other way), which the broker delays by its initial rebalance delay.
    const perTask = `first task ${Math.round(taskMs[0])} ms, with the changelog reader's group join; the others ${Math.round((restoreMs - taskMs[0]) / (tasks.length - 1))} ms each`;

    // Without a changelog: the stage's input replayed from offset 0 into an empty store.
    const replay = runtime(scoresStage, kafkaLog('replaying'), localCheckpoints(join(await newDir(), 'state'), scoresStage, silent));
    const replayStarted = performance.now();
    void replay.start();
    await waitFor(() => replay.caughtUp(), 'the replay of the scores stage', 300_000);
    const replayMs = performance.now() - replayStarted;
    await replay.stop();

    process.stdout.write(
      `scores stage, ${tasks.length} tasks over ${replay.stats.processed.toLocaleString('en-US')} input records: restored from ${changelogRecords.toLocaleString('en-US')} changelog records ` +
        `in ${Math.round(restoreMs)} ms (${perTask}), against ${Math.round(replayMs)} ms to replay its input from offset 0 (${(replayMs / restoreMs).toFixed(1)}× faster)\n`,
    );
    report({
      figure: 'scores stage: every task restored from its changelog by a process with an empty data dir (Kafka mock)',
      value: Math.round(restoreMs),
      unit: 'ms',
      baseline: { name: 'replay of its input from offset 0', value: Math.round(replayMs) },
      note: `${changelogRecords} changelog records, ${replay.stats.processed} input records; ${perTask}`,
    });
  } finally {
    for (const log of logs) await log.close();
    await Promise.all([broker.stop(), registry.close()]);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}
