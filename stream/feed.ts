import type { EventLog } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { Codec } from '../schemas/codec.ts';
import type { PublicEvent } from '../schemas/records.ts';

const TOPIC = TOPICS.publicEvents.name;
const BATCH = 500;

/**
 * Tails public.events from its end, without a consumer group: every stream instance reads
 * every partition in full and serves its own clients. Events are derived once, by the
 * public-events processor; this only reads them.
 */
export class PublicEventFeed {
  private readonly positions = new Map<number, number>();
  private stopped = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly options: { log: EventLog; codec: Codec; logger: Logger; pollMs: number; onEvent: (e: PublicEvent) => void },
  ) {}

  async start(): Promise<void> {
    for (const { partition, offset } of await this.options.log.endOffsets(TOPIC)) this.positions.set(partition, offset);
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let read = 0;
      try {
        for (const [partition, offset] of this.positions) {
          const records = await this.options.log.read(TOPIC, partition, offset, BATCH);
          for (const record of records) {
            this.positions.set(partition, record.offset + 1);
            if (record.value !== null) this.options.onEvent((await this.options.codec.decode(TOPIC, record.value)) as PublicEvent);
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
