import type { z } from 'zod';
import type { Codec } from '../schemas/codec.ts';
import type { AppendResult, EventLog } from '../infra/log/port.ts';
import { UsageError } from './command.ts';

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
