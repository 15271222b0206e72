import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { LogRecord } from '../port.ts';
import type { ConsumerSettings } from './kafka-consumer.ts';
import { toLogRecord } from './kafka-records.ts';

export interface PartitionRange {
  topic: string;
  partition: number;
  /** First offset to read; must be retained. */
  from: number;
  /** Offset after the last one to read; at most the high watermark, so the read always ends. */
  end: number;
}

/**
 * Reads the records of [from, end) of one partition. kafkajs has no manual partition
 * assignment, so this joins a throwaway group (nothing committed) and seeks the partition at
 * each join: before the first fetch, and again from the next unread offset should the group
 * re-balance mid-read. Joining a new group costs the broker's initial rebalance delay (3 s by
 * default on Kafka and on the mock).
 */
export async function readRange(kafka: Kafka, settings: ConsumerSettings, groupPrefix: string, range: PartitionRange): Promise<LogRecord[]> {
  const { topic, partition, end } = range;
  const records: LogRecord[] = [];
  let next = range.from;
  const consumer = kafka.consumer({ groupId: `${groupPrefix}.read.${randomUUID()}`, ...settings });
  try {
    await new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.GROUP_JOIN, () => consumer.seek({ topic, partition, offset: String(next) }));
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if (!payload.restart) reject(payload.error);
      });
      const run = async (): Promise<void> => {
        await consumer.connect();
        await consumer.subscribe({ topics: [topic], fromBeginning: false });
        await consumer.run({
          autoCommit: false,
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, isStale, resolveOffset }) => {
            if (batch.partition !== partition || isStale()) return;
            for (const message of batch.messages) {
              const offset = Number(message.offset);
              if (offset < next || offset >= end) continue;
              records.push(toLogRecord(topic, partition, message));
              next = offset + 1;
            }
            const last = batch.messages.at(-1);
            if (last) resolveOffset(last.offset);
            // Offsets may have gaps (compaction), so the end is reached by position, not by count.
            if (last && Number(last.offset) + 1 >= end) resolve();
          },
        });
      };
      run().catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}
