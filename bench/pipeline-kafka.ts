import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { seedHistory } from '../infra/feeds/sim/runner.ts';
import { KafkaEventLog } from '../infra/log/kafka/kafka-log.ts';
import { ConfluentSchemaRegistry } from '../infra/registry/confluent.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { FileCheckpoints } from '../processors/runtime/checkpoints/files.ts';
import { ProcessorRuntime } from '../processors/runtime/runtime.ts';
import { CATALOGUE } from '../schemas/catalogue.ts';
import { Codec } from '../schemas/codec.ts';
import { startSchemaRegistryServer } from '../infra/peers/schema-registry-server.ts';
import { startMockBroker } from '../infra/peers/kafka-mock-broker.ts';
import { consumeNoop } from './log-kafka.ts';
import { report, shareOfBaseline } from './results.ts';

/**
 * The mock broker keeps about 5 MB per partition: half a day of the default world keeps its
 * largest input (market ticks) well below that, so no input is dropped before it is read.
 */
const DAYS = Number(process.env.BENCH_PIPELINE_KAFKA_DAYS ?? 0.5);

/**
 * The quant engine in Kafka mode: the default world's inputs on the Kafka mock broker (with
 * a schema registry), the engine from offset 0 to the end, against a no-op kafkajs consumer
 * of the same topics in the same run. Both rates run from the first record delivered, so
 * the group join (the broker's rebalance delay) is left out of both.
 */
export async function benchPipelineKafka(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-pipeline-kafka-'));
  const [broker, registry] = await Promise.all([startMockBroker(), startSchemaRegistryServer()]);
  const logger = pino({ level: 'warn' });
  // The mock creates topics itself, with partition counts of its own: the log warns of each.
  const log = new KafkaEventLog({ brokers: [broker.brokers], clientId: 'bench', idempotent: false, logger: pino({ level: 'error' }), sessionTimeoutMs: 6_000 });
  try {
    await log.ensureTopics(CATALOGUE);
    const codec = new Codec(new ConfluentSchemaRegistry(registry.url));
    await codec.registerTopics(CATALOGUE.map((t) => t.name));
    await seedHistory({ log, codec, dataDir: dir, seed: 1, days: DAYS, endMs: Date.UTC(2026, 5, 1) });
    const inputs = [...quantEngine.inputs];
    let retained = 0;
    for (const topic of inputs) {
      const [starts, ends] = await Promise.all([log.startOffsets(topic), log.endOffsets(topic)]);
      retained += ends.reduce((sum, end, i) => sum + end.offset - starts[i].offset, 0);
    }

    const noopPerSec = await consumeNoop(broker.brokers, inputs, 'bench.noop', retained);

    const runtime = new ProcessorRuntime({
      processor: quantEngine,
      log,
      codec,
      checkpoints: new FileCheckpoints(join(dir, 'state')),
      logger,
      maxBatchRecords: 5000,
      checkpointIntervalMs: 60_000,
    });
    void runtime.start();
    while (runtime.stats.processed === 0) await sleep(20);
    const first = { at: performance.now(), processed: runtime.stats.processed };
    while (!(await runtime.caughtUp())) await sleep(100);
    const engineSeconds = (performance.now() - first.at) / 1000;
    const enginePerSec = (runtime.stats.processed - first.processed) / engineSeconds;
    await runtime.stop();

    process.stdout.write(`${DAYS} day(s) of the default world on the Kafka mock broker: ${retained.toLocaleString('en-US')} input records\n`);
    process.stdout.write(`baseline, no-op kafkajs consumer of the inputs: ${Math.round(noopPerSec).toLocaleString('en-US')} records/s\n`);
    process.stdout.write(
      `quant engine on Kafka: ${Math.round(enginePerSec).toLocaleString('en-US')} events/s (${engineSeconds.toFixed(1)} s, ` +
        `${(enginePerSec / noopPerSec).toFixed(2)} of the baseline)\n`,
    );
    report({
      figure: `quant engine, ${DAYS} day(s) of the default world, Kafka mock broker`,
      value: enginePerSec,
      unit: 'events/s',
      baseline: { name: 'no-op kafkajs consumer', value: noopPerSec },
      target: shareOfBaseline(0.5),
    });
  } finally {
    await log.close();
    await Promise.all([broker.stop(), registry.close()]);
    await rm(dir, { recursive: true, force: true });
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
