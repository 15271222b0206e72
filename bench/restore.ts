import { mkdtemp, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { analogsStage, type AnalogsStageState } from '../processors/analogs/analogs.ts';
import { poolOf } from '../processors/analogs/stored-pool.ts';
import { outcomesStage } from '../processors/outcomes/outcomes.ts';
import { CATALOGUE } from '../schemas/catalogue.ts';
import { Codec } from '../schemas/codec.ts';
import { inputInHalves } from '../test/helpers/read-topic.ts';
import { openEmbedded } from '../test/helpers/runtime-fixture.ts';
import { report } from './results.ts';

// As many tokens as the default world, over a day: the mock broker keeps about 5 MB per partition.
const WORLD = { seed: 5, days: 1, endMs: Date.UTC(2026, 5, 1), tokens: 20, authors: 150 };
const silent = pino({ level: 'silent' });
/** The Kafka log's default consumer session timeout. */
const SESSION_TIMEOUT_MS = 30_000;

/** The keyed stages after the engine, in the order they follow it. */
const STAGES: Processor<unknown>[] = [outcomesStage, scoresStage, analogsStage];

/**
 * How fast a keyed task's state moves to a process that lacks it, for each keyed stage after
 * the engine, on the Kafka mock broker. The engine and the stages run over a seeded world,
 * the stages with their changelogs; then a process with an empty data dir restores every task
 * of a stage from its changelog, as one taking the tasks over on another machine does.
 * Baseline: the same process rebuilding that state by replaying the stage's input from offset
 * 0, which is what it would do without a changelog.
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
    const stages: ProcessorRuntime<unknown>[] = [];
    for (const stage of STAGES) {
      const stageLog = kafkaLog(stage.name);
      stages.push(runtime(stage, stageLog, localCheckpoints(join(await newDir(), 'state'), stage, silent, stageLog)));
    }
    for (const run of [engine, ...stages]) void run.start();
    await waitFor(async () => (await Promise.all([engine, ...stages].map((run) => run.caughtUp()))).every(Boolean), 'the engine and its stages to process the world', 600_000);
    await Promise.all([engine, ...stages].map((run) => run.stop()));

    // A consumer that stopped stays a member of its group on the mock broker until its session
    // ends, and a new member's join waits for it: the replays below start once those have ended.
    await sleep(SESSION_TIMEOUT_MS);
    for (const stage of STAGES) await restoreAndReplay(stage);
  } finally {
    for (const log of logs) await log.close();
    await Promise.all([broker.stop(), registry.close()]);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }

  async function replayFromStart(stage: Processor<unknown>): Promise<{ replayMs: number; processed: number }> {
    const replay = runtime(stage, kafkaLog(`replaying-${stage.name}`), localCheckpoints(join(await newDir(), 'state'), stage, silent));
    const started = performance.now();
    void replay.start();
    await waitFor(() => replay.caughtUp(), `the replay of the ${stage.name} stage`, 600_000);
    const replayMs = performance.now() - started;
    await replay.stop();
    return { replayMs, processed: replay.stats.processed };
  }

  async function restoreAndReplay(stage: Processor<unknown>): Promise<void> {
    const log = logs[0];
    const tasks = stage.parallelism === 'single' ? [0] : (await log.endOffsets(stage.inputs[0])).map((p) => p.partition);
    const changelogRecords = (await log.endOffsets(changelogTopic(stage).name)).reduce((sum, p) => sum + p.offset, 0);

    // What a takeover on another machine does before its first record: every task from the changelog.
    const restoringLog = kafkaLog(`restoring-${stage.name}`);
    const restoring = localCheckpoints(join(await newDir(), 'state'), stage, silent, restoringLog);
    const taskMs: number[] = [];
    for (const task of tasks) {
      const started = performance.now();
      const checkpoint = await restoring.load(stage.name, task);
      // The analogs stage builds its pool and index from its tables at its first record: timed too.
      if (stage === analogsStage) poolOf((checkpoint!.state as AnalogsStageState).pool);
      taskMs.push(performance.now() - started);
    }
    const restoreMs = taskMs.reduce((sum, ms) => sum + ms, 0);
    // The log's reader of the changelog joins a consumer group of its own at its first read (kafkajs reads no other way), which the broker delays by its initial rebalance delay.
    const perTask = tasks.length === 1 ? 'one task, with the changelog reader\'s group join' : `first task ${Math.round(taskMs[0])} ms, with the changelog reader's group join; the others ${Math.round((restoreMs - taskMs[0]) / (tasks.length - 1))} ms each`;

    // Without a changelog: the stage's input replayed from offset 0 into an empty store.
    const { replayMs, processed } = await replayFromStart(stage);

    process.stdout.write(
      `${stage.name} stage, ${tasks.length} task(s) over ${processed.toLocaleString('en-US')} input records: restored from ${changelogRecords.toLocaleString('en-US')} changelog records ` +
        `in ${Math.round(restoreMs)} ms (${perTask}), against ${Math.round(replayMs)} ms to replay its input from offset 0 (${(replayMs / restoreMs).toFixed(1)}× faster)\n`,
    );
    report({
      figure: `${stage.name} stage: every task restored from its changelog by a process with an empty data dir (Kafka mock)`,
      value: Math.round(restoreMs),
      unit: 'ms',
      baseline: { name: 'replay of its input from offset 0', value: Math.round(replayMs) },
      note: `${changelogRecords} changelog records, ${processed} input records; ${perTask}`,
    });
  }
}
