import type { EventLog, LogRecord } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { Codec } from '../schemas/codec.ts';
import type { PublicEvent } from '../schemas/records.ts';

export const PUBLIC_EVENTS_TOPIC = TOPICS.publicEvents.name;
export const READ_BATCH = 500;

/**
 * Tails public.events from its end, without a consumer group: every stream instance reads
 * every partition in full and serves its own clients. Events are derived once, by the
 * public-events processor; this only reads them.
 *
 * A position moves on in the same synchronous step that hands its event to `onEvent`, so
 * `positions()` always says exactly which events were handed out: what a resume cursor and
 * a connection's switch from catching up to the live flow rely on.
 */
export class PublicEventFeed {
  private next: number[] = [];
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly options: { log: EventLog; codec: Codec; logger: Logger; pollMs: number; onEvent: (e: PublicEvent) => void },
  ) {}

  async start(): Promise<void> {
    for (const { partition, offset } of await this.options.log.endOffsets(PUBLIC_EVENTS_TOPIC)) this.next[partition] = offset;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** The next offset to read on each partition (a copy), indexed by partition. */
  positions(): number[] {
    return [...this.next];
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let read = 0;
      try {
        for (let partition = 0; partition < this.next.length; partition++) {
          const records = await this.options.log.read(PUBLIC_EVENTS_TOPIC, partition, this.next[partition], READ_BATCH);
          for (const record of records) {
            const event = await decodePublicEvent(record, this.options);
            this.next[partition] = record.offset + 1;
            if (event !== null) this.options.onEvent(event);
          }
          read += records.length;
        }
      } catch (err) {
        this.options.logger.error({ err }, 'reading public events failed; retrying');
      }
      if (read === 0) await new Promise((resolve) => setTimeout(resolve, this.options.pollMs));
    }
  }
}

/** The event a record holds; null for a tombstone or a record that does not decode (logged and passed over). */
export async function decodePublicEvent(record: LogRecord, deps: { codec: Codec; logger: Logger }): Promise<PublicEvent | null> {
  if (record.value === null) return null;
  try {
    return (await deps.codec.decode(PUBLIC_EVENTS_TOPIC, record.value)) as PublicEvent;
  } catch (err) {
    deps.logger.error({ err, partition: record.partition, offset: record.offset }, 'a public event does not decode; passed over');
    return null;
  }
}
