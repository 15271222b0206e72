import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { KafkaEventLog } from '../infra/log/kafka/kafka-log.ts';
import type { OutgoingRecord } from '../infra/log/port.ts';
import { startMockBroker } from '../infra/peers/kafka-mock-broker.ts';

export interface KafkaBenchResult {
  appendPerSec: number;
  consumePerSec: number;
  /** Baseline: a plain kafkajs eachBatch consumer that does nothing, same broker and data. */
  noopConsumePerSec: number;
  /**
   * Records each consumer read: all appended ones unless the mock broker's retention (about
   * 5 MB per partition) already dropped the oldest.
   */
  consumedRecords: number;
}

const APPEND_BATCH = 1000;
const ROUNDS = 3;

/**
 * Throughput of the Kafka adapter on the kcat mock broker: appends in batches of 1000 (one
 * produce request in flight, each acknowledged before the next), then consumption through a
 * KafkaEventLog group and through a no-op kafkajs consumer, each in new groups over a few
 * rounds. Consumption is timed from the first delivery to the last so the group join (3 s
 * initial rebalance delay) is left out of both.
 */
export async function benchKafka(
  records: Pick<OutgoingRecord, 'key' | 'value' | 'timestamp'>[],
  topicName: string,
): Promise<KafkaBenchResult> {
  const broker = await startMockBroker();
  const log = new KafkaEventLog({
    brokers: [broker.brokers],
    clientId: 'bench',
    idempotent: false,
    logger: pino({ level: 'silent' }),
    sessionTimeoutMs: 6_000,
  });
  try {
    await log.ensureTopics([{ name: topicName, partitions: 4, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);

    const appendStart = performance.now();
    for (let i = 0; i < records.length; i += APPEND_BATCH) {
      await log.append(topicName, records.slice(i, i + APPEND_BATCH));
    }
    const appendPerSec = rate(records.length, performance.now() - appendStart);
    const [starts, ends] = await Promise.all([log.startOffsets(topicName), log.endOffsets(topicName)]);
    const retained = ends.reduce((sum, end, i) => sum + end.offset - starts[i].offset, 0);

    // Consumption phases last well under a second: alternate the two consumers over a few
    // rounds (a new group each) and keep the median, so a burst of load elsewhere on the
    // machine does not decide the ratio.
    const adapter: number[] = [];
    const noop: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      adapter.push(await consumeWithLog(log, topicName, `bench-log-${round}`, retained));
      noop.push(await consumeNoop(broker.brokers, [topicName], `bench-noop-${round}`, retained));
    }
    return { appendPerSec, consumePerSec: median(adapter), noopConsumePerSec: median(noop), consumedRecords: retained };
  } finally {
    await log.close();
    await broker.stop();
  }
}

async function consumeWithLog(log: KafkaEventLog, topic: string, groupId: string, total: number): Promise<number> {
  const consumer = log.consumer({ groupId, topics: [topic], fromBeginning: true });
  const counter = countUntil(total);
  void consumer.run(async (batch) => counter.add(batch.records.length));
  try {
    return await counter.done;
  } finally {
    await consumer.stop();
  }
}

/**
 * The baseline: kafkajs defaults, a handler that only counts; records/s from the first
 * delivery to the `total`-th record.
 */
export async function consumeNoop(brokers: string, topics: string[], groupId: string, total: number): Promise<number> {
  const consumer = new Kafka({ clientId: 'bench-noop', brokers: [brokers], logLevel: logLevel.NOTHING }).consumer({ groupId });
  const counter = countUntil(total);
  try {
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({ eachBatch: async ({ batch }) => counter.add(batch.messages.length) });
    return await counter.done;
  } finally {
    await consumer.disconnect();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Counts delivered records; `done` resolves with records/s over the records after the first
 * delivery, timed from that delivery to the `total`-th record.
 */
function countUntil(total: number): { add(n: number): void; done: Promise<number> } {
  let seen = 0;
  let first = { at: 0, count: 0 };
  let finish!: (perSec: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  return {
    add(n) {
      if (seen === 0) first = { at: performance.now(), count: n };
      seen += n;
      if (seen >= total) finish(rate(seen - first.count, performance.now() - first.at));
    },
    done,
  };
}

function rate(count: number, ms: number): number {
  return Math.round((count / Math.max(ms, 1)) * 1000);
}
