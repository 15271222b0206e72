import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * A resume cursor: where the stream stood on public.events after an event, as the next
 * offset to read on every partition ("everything before it, on that partition, was seen").
 * It is log positions, not instance state, so any stream instance on the same log honours it.
 *
 * Subscriptions of one connection usually stand at the same place (`positions`). While a
 * connection catches up, a subscription resumed from an older cursor lags behind the others
 * for a while; such subscriptions are listed in `lagging` by their filter, so a client that
 * reconnects with the cursor of any frame resumes each subscription where it was.
 */
export interface StreamPosition {
  /** When the cursor was issued, epoch ms: the resume window counts from here. */
  issuedAt: number;
  /** Next offset per partition, indexed by partition number. */
  positions: number[];
  /** Subscriptions (by filterKey) that stand elsewhere than `positions`. */
  lagging: Map<string, number[]>;
}

const Offsets = z.array(z.number().int().nonnegative()).min(1).max(1024);
const Wire = z.strictObject({
  v: z.literal(1),
  t: z.number().int().nonnegative(),
  p: Offsets,
  l: z.array(z.tuple([z.string().regex(/^[0-9a-f]{16}$/), Offsets])).max(64).optional(),
});

export function encodeCursor(position: StreamPosition): string {
  const wire: z.infer<typeof Wire> = { v: 1, t: position.issuedAt, p: position.positions };
  if (position.lagging.size > 0) wire.l = [...position.lagging];
  return Buffer.from(JSON.stringify(wire)).toString('base64url');
}

/** The position a cursor carries, or null when it is not a cursor of this stream. */
export function decodeCursor(cursor: string): StreamPosition | null {
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(cursor)) return null;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const parsed = Wire.safeParse(json);
  if (!parsed.success) return null;
  const { t, p, l = [] } = parsed.data;
  if (l.some(([, offsets]) => offsets.length !== p.length)) return null;
  return { issuedAt: t, positions: p, lagging: new Map(l) };
}

/** Names a subscription's filter the same way on every connection, so a resumed one finds its lagging position. */
export function filterKey(events: readonly string[], tokenIds: readonly string[]): string {
  const canonical = `${[...new Set(events)].sort().join(',')}|${[...new Set(tokenIds)].sort().join(',')}`;
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}
