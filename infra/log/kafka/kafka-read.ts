import { randomUUID } from 'node:crypto';
import type { Consumer, Kafka } from 'kafkajs';
import type { LogRecord } from '../port.ts';
import type { ConsumerSettings } from './kafka-consumer.ts';
import { toLogRecord } from './kafka-records.ts';

export interface PartitionRange {
  partition: number;
  /** First offset to read; must be retained. */
  from: number;
  /** Offset after the last one to read; at most the high watermark, so the read always ends. */
  end: number;
}

const READER_FETCH_WAIT_MS = 50;

interface Reading extends PartitionRange {
  /** The next offset the read still needs. */
  next: number;
  records: LogRecord[];
  done(): void;
  fail(err: Error): void;
}

/**
 * Reads ranges of one topic's partitions through one long-lived consumer. kafkajs has no
 * manual partition assignment, so the reader is the only member of a group of its own (nothing
 * committed), which gives it every partition. It keeps them paused; a read seeks one partition
 * to the range's start and resumes it until the range's end. Joining a new group costs the
 * broker's initial rebalance delay (3 s by default on Kafka and on the mock), so it is paid
 * once per topic and process rather than at every read. Reads run one at a time.
 */
export class TopicReader {
  private readonly consumer: Consumer;
  private readonly joined: Promise<void>;
  private queue: Promise<unknown> = Promise.resolve();
  private reading: Reading | undefined;
  /** Set once kafkajs gave the consumer up: the reader is then replaced. */
  failed: Error | undefined;

  constructor(
    kafka: Kafka,
    settings: ConsumerSettings,
    groupPrefix: string,
    private readonly topic: string,
  ) {
    // With every partition paused, kafkajs waits out its fetch wait before it sees one resumed:
    // a short one bounds how long a read waits to start.
    this.consumer = kafka.consumer({ groupId: `${groupPrefix}.read.${randomUUID()}`, ...settings, maxWaitTimeInMs: READER_FETCH_WAIT_MS });
    this.joined = new Promise<void>((resolve, reject) => {
      this.consumer.on(this.consumer.events.GROUP_JOIN, ({ payload }) => {
        // Every partition paused but the one being read, which a re-balance seeks again from where it got to.
        const idle = (payload.memberAssignment[topic] ?? []).filter((p) => p !== this.reading?.partition);
        if (idle.length > 0) this.consumer.pause([{ topic, partitions: idle }]);
        if (this.reading) this.consumer.seek({ topic, partition: this.reading.partition, offset: String(this.reading.next) });
        resolve();
      });
      this.consumer.on(this.consumer.events.CRASH, ({ payload }) => {
        if (payload.restart) return;
        this.failed = payload.error;
        this.reading?.fail(payload.error);
        reject(payload.error);
      });
    });
    // Observed through `joined` and each read.
    this.joined.catch(() => undefined);
    void this.run().catch((err: Error) => {
      this.failed = err;
      this.reading?.fail(err);
    });
  }

  /** The records of [from, end) of one partition, in offset order. */
  read(range: PartitionRange): Promise<LogRecord[]> {
    const result = this.queue.then(() => this.readNow(range));
    this.queue = result.catch(() => undefined);
    return result;
  }

  async close(): Promise<void> {
    await this.queue;
    await this.consumer.disconnect();
  }

  private async run(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topics: [this.topic], fromBeginning: false });
    await this.consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, isStale, resolveOffset }) => {
        const reading = this.reading;
        // A batch fetched before the partition was sought to this read's start is stale.
        if (!reading || batch.partition !== reading.partition || isStale()) return;
        for (const message of batch.messages) {
          const offset = Number(message.offset);
          if (offset < reading.next || offset >= reading.end) continue;
          reading.records.push(toLogRecord(this.topic, reading.partition, message));
          reading.next = offset + 1;
        }
        // The fetch goes on after this batch; offsets may have gaps (compaction), so the end is
        // reached by position, not by count.
        const last = batch.messages.at(-1);
        if (!last) return;
        resolveOffset(last.offset);
        if (Number(last.offset) + 1 >= reading.end) reading.done();
      },
    });
  }

  private async readNow(range: PartitionRange): Promise<LogRecord[]> {
    await this.joined;
    if (this.failed) throw this.failed;
    const { topic } = this;
    const records: LogRecord[] = [];
    let settle!: { done(): void; fail(err: Error): void };
    const finished = new Promise<void>((resolve, reject) => (settle = { done: resolve, fail: reject }));
    this.reading = { ...range, next: range.from, records, ...settle };
    try {
      this.consumer.seek({ topic, partition: range.partition, offset: String(range.from) });
      this.consumer.resume([{ topic, partitions: [range.partition] }]);
      await finished;
      return records;
    } finally {
      this.reading = undefined;
      this.consumer.pause([{ topic, partitions: [range.partition] }]);
    }
  }
}
