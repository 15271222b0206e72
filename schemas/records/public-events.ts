import { z } from 'zod';
import { eventTime, tokenId } from './primitives.ts';

/**
 * Public events (topic public.events): what subscribers hear about, derived once by the
 * public-events processor and read by every channel (webhooks, the WebSocket stream).
 * `data` is the wire-form JSON text, rendered by the same presenters as the REST API.
 * Field names match schemas/avro/public-event/v1.avsc one to one.
 */

export const PUBLIC_EVENT_TYPES = ['signal.created', 'signal.ended', 'token.score.updated', 'cohort.convergence', 'narrative.shift'] as const;
export type PublicEventType = (typeof PUBLIC_EVENT_TYPES)[number];

export const PUBLIC_EVENT_ID = /^ev_[0-9a-f]+$/;

export const PublicEventSchema = z.strictObject({
  eventId: z.string().regex(PUBLIC_EVENT_ID, 'must be ev_<hex>'),
  type: z.enum(PUBLIC_EVENT_TYPES),
  ts: eventTime,
  dataset: z.string().min(1),
  tokenId: tokenId.nullable(),
  ownerKeyId: z.string().min(1).nullable(),
  teamId: z.string().min(1).nullable(),
  data: z.string().refine((s) => s.startsWith('{'), 'must be a JSON object'),
});
export type PublicEvent = z.infer<typeof PublicEventSchema>;

/**
 * Whether an event reaches a key (every channel asks this): an auto cohort's or any other
 * event reaches every key; a manual cohort's only its owner key, and its team's keys when shared.
 */
export function reachesKey(e: Pick<PublicEvent, 'ownerKeyId' | 'teamId'>, keyId: string, teamId: string | null): boolean {
  return e.ownerKeyId === null || e.ownerKeyId === keyId || (e.teamId !== null && e.teamId === teamId);
}
