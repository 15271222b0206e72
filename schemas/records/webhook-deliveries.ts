import { z } from 'zod';
import { eventTime } from './primitives.ts';
import { WEBHOOK_ID } from './control-webhooks.ts';

/**
 * Webhook delivery attempts (webhooks.deliveries), one record per attempt with its `whd_`
 * id. The delivery role rebuilds its retry schedule from these, so pending retries survive
 * a crash, and a replay of the projections only re-reads them: it never re-sends.
 * Field names match schemas/avro/webhook-delivery/v1.avsc one to one.
 */

/** `delivered`: 2xx within the time limit; `failed`: anything else, the address check included. */
export const DELIVERY_OUTCOMES = ['delivered', 'failed'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export const WebhookDeliverySchema = z.strictObject({
  deliveryId: z.string().regex(/^whd_[0-9a-f]+$/, 'must be whd_<hex>'),
  webhookId: z.string().regex(WEBHOOK_ID),
  eventId: z.string().regex(/^ev_[0-9a-f]+$/),
  eventType: z.string().min(1),
  attempt: z.number().int().min(1),
  ts: eventTime,
  outcome: z.enum(DELIVERY_OUTCOMES),
  httpStatus: z.number().int().min(100).max(599).nullable(),
  latencyMs: z.number().int().min(0).nullable(),
  error: z.string().min(1).max(500).nullable(),
  /** When the next attempt is due; null when delivered, out of retries, or a test. */
  nextRetryAt: eventTime.nullable(),
  /** A webhook.test from the send-test action: never retried, never counted toward auto-disable. */
  test: z.boolean(),
  /** The version of the webhook's `resend` command this attempt answers; null otherwise. */
  resendOf: z.number().int().min(1).nullable(),
});
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;
