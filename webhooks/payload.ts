import { randomBytes } from 'node:crypto';
import { iso } from '../presenters/resource.ts';
import type { PublicEvent } from '../schemas/records.ts';
import { signatureHeader } from './signature.ts';

/**
 * What a receiver gets (spec 6.2): the body `{ id, object, type, created_at, dataset,
 * livemode, data }` with `data` as the public event rendered it (no second serialisation),
 * and the Service-* headers, signed per attempt.
 */

export type Deliverable = Pick<PublicEvent, 'eventId' | 'type' | 'ts' | 'dataset' | 'data'> | {
  eventId: string;
  type: 'webhook.test';
  ts: number;
  dataset: string;
  data: string;
};

export function eventBody(e: Deliverable): string {
  const head = JSON.stringify({ id: e.eventId, object: 'event', type: e.type, created_at: iso(e.ts), dataset: e.dataset, livemode: true });
  return `${head.slice(0, -1)},"data":${e.data}}`;
}

/** A new `whd_` id: one per attempt. */
export function newDeliveryId(): string {
  return `whd_${randomBytes(12).toString('hex')}`;
}

/** The headers of a delivery, signed with every secret valid now (the new and the old one while a rotation overlaps). */
export function deliveryHeaders(type: string, deliveryId: string, secrets: readonly string[], unixSeconds: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'tqa-webhooks/1',
    'service-event': type,
    'service-delivery': deliveryId,
    'service-signature': signatureHeader(secrets, unixSeconds, body),
  };
}
