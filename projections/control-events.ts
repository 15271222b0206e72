import type { z } from 'zod';
import type { Codec } from '../schemas/codec.ts';
import { setTimeout as delay } from 'node:timers/promises';
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

/** How long a control command waits for the service to apply its event when no projections role runs. */
export const APPLY_TIMEOUT_MS = 10_000;
/**
 * How long it waits in all while the projection's group has a running member: a service that
 * is only busy (a first start's catch-up on a loaded machine) applies the event in the end.
 */
export const BUSY_APPLY_TIMEOUT_MS = 120_000;

/** The time by which a control command started now must have been applied: the whole command, append included, counts. */
export function applyDeadline(): number {
  return Date.now() + APPLY_TIMEOUT_MS;
}

/**
 * Waits until the consumer group has committed past the appended event, i.e. its
 * projection has stored it (read-your-writes for the operator's commands). At the deadline,
 * a group with a running member gets until BUSY_APPLY_TIMEOUT_MS from the command's start
 * (`onBusy` says so once); false then, or at the deadline when no member runs.
 */
export async function applied(log: EventLog, groupId: string, topic: string, at: AppendResult, deadline: number, onBusy?: () => void): Promise<boolean> {
  let until = deadline;
  for (;;) {
    const committed = await log.committedOffsets(groupId, topic);
    if ((committed.find((c) => c.partition === at.partition)?.offset ?? 0) > at.offset) return true;
    if (Date.now() >= until) {
      const busy = until === deadline && ((await log.groupMembers(groupId)) ?? []).length > 0;
      if (!busy) return false;
      until = deadline - APPLY_TIMEOUT_MS + BUSY_APPLY_TIMEOUT_MS;
      onBusy?.();
    }
    await delay(20);
  }
}

/** Every valid event of a control topic, in log order per partition (invalid ones were dead-lettered by the projection). */
export async function readControlEvents<S extends z.ZodType>(log: EventLog, codec: Codec, topic: string, schema: S): Promise<z.infer<S>[]> {
  const events: z.infer<S>[] = [];
  for (const { partition, offset } of await log.startOffsets(topic)) {
    for (let from = offset; ; ) {
      const batch = await log.read(topic, partition, from, 1_000);
      if (batch.length === 0) break;
      for (const record of batch) {
        if (record.value === null) continue;
        const parsed = schema.safeParse(await codec.decode(topic, record.value));
        if (parsed.success) events.push(parsed.data);
      }
      from = batch.at(-1)!.offset + 1;
    }
  }
  return events;
}
