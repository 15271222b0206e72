import type { z } from 'zod';
import type { Codec } from '../schemas/codec.ts';
import type { AppendResult, EventLog } from '../infra/log/port.ts';
import { UsageError } from './usage-error.ts';

// Used by api, research, webhooks and cli: here, the highest layer below research and webhooks, which may not import each other.

/** The value as the schema gives it back, or a UsageError naming every problem. */
export function parseOrUsage<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return parsed.data;
}

/** Appends one control event (encoded for its topic) and returns where it landed. */
export async function appendEvent(
  log: EventLog,
  codec: Codec,
  topic: string,
  key: string,
  value: { ts: number },
): Promise<AppendResult> {
  const [at] = await log.append(topic, [{ key, value: await codec.encode(topic, value), timestamp: value.ts }]);
  return at;
}

/** Every valid event of a control topic, in log order per partition (invalid ones were dead-lettered by the projection). */
export async function readControlEvents<S extends z.ZodType>(log: EventLog, codec: Codec, topic: string, schema: S): Promise<z.infer<S>[]> {
  return new ControlTail(log, codec, topic, schema).next();
}

/**
 * A control topic read onward: each next() gives the valid events appended since the last
 * one (the first, every event), in log order per partition. For readers that hold a control
 * topic's state in memory and keep it current without a consumer group (the API's keys).
 */
export class ControlTail<S extends z.ZodType> {
  /** The next offset to read, by partition; empty until the first read. */
  private readonly positions = new Map<number, number>();

  constructor(
    private readonly log: EventLog,
    private readonly codec: Codec,
    private readonly topic: string,
    private readonly schema: S,
  ) {}

  async next(): Promise<z.infer<S>[]> {
    const events: z.infer<S>[] = [];
    if (this.positions.size === 0) for (const { partition, offset } of await this.log.startOffsets(this.topic)) this.positions.set(partition, offset);
    // Moved only once every partition is read: a read that fails gives nothing and moves nothing.
    const reached = new Map(this.positions);
    for (const [partition, position] of this.positions) {
      for (let from = position; ; ) {
        const batch = await this.log.read(this.topic, partition, from, 1_000);
        if (batch.length === 0) break;
        for (const record of batch) {
          if (record.value === null) continue;
          const parsed = this.schema.safeParse(await this.codec.decode(this.topic, record.value));
          if (parsed.success) events.push(parsed.data);
        }
        from = batch.at(-1)!.offset + 1;
        reached.set(partition, from);
      }
    }
    for (const [partition, offset] of reached) this.positions.set(partition, offset);
    return events;
  }
}
