import type { Codec } from '../../schemas/codec.ts';
import type { EventLog, OutgoingRecord } from '../log/port.ts';

/** All a producer needs of the log. */
export type LogAppender = Pick<EventLog, 'append'>;

/**
 * Encodes records with the codec and appends them to the log in large batches, one
 * append call per topic per batch. While one batch is being appended (and fsynced) the
 * caller already fills the next, so generation and IO overlap; at most one batch is in
 * flight, which keeps each topic's records in the order they were sent.
 */
export class BatchProducer {
  private buffers = new Map<string, OutgoingRecord[]>();
  private buffered = 0;
  private inFlight: Promise<void> | undefined;
  private durable = 0;
  private readonly durableByTopic = new Map<string, number>();

  constructor(
    private readonly log: LogAppender,
    private readonly codec: Codec,
    private readonly batchRecords = 10_000,
  ) {}

  async send(topic: string, key: string | null, value: unknown, timestamp: number): Promise<void> {
    const encoded = await this.codec.encode(topic, value);
    let buffer = this.buffers.get(topic);
    if (!buffer) this.buffers.set(topic, (buffer = []));
    buffer.push({ key, value: encoded, timestamp });
    if (++this.buffered >= this.batchRecords) await this.dispatch();
  }

  /** Resolves once everything sent so far is durable in the log. */
  async flush(): Promise<void> {
    await this.dispatch();
    await this.inFlight;
  }

  /** Records acknowledged by the log so far. */
  get produced(): number {
    return this.durable;
  }

  producedByTopic(): Record<string, number> {
    return Object.fromEntries(this.durableByTopic);
  }

  private async dispatch(): Promise<void> {
    // Waiting here (not before encoding) is what lets the next batch fill during an append.
    await this.inFlight;
    if (this.buffered === 0) return;
    const batch = [...this.buffers];
    this.buffers = new Map();
    this.buffered = 0;
    const append = Promise.all(batch.map(([topic, records]) => this.log.append(topic, records))).then(() => {
      for (const [topic, records] of batch) {
        this.durable += records.length;
        this.durableByTopic.set(topic, (this.durableByTopic.get(topic) ?? 0) + records.length);
      }
    });
    // Marked handled now: a failure surfaces at the next send or flush, not as an unhandled rejection.
    append.catch(() => undefined);
    this.inFlight = append;
  }
}
