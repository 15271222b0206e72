import { z } from 'zod';
import { MAX_DELIVERIES_LIMIT } from '../../projections/read-models/webhooks.ts';
import { DELIVERY_OUTCOMES, WEBHOOK_EVENT_TYPES, WEBHOOK_ID } from '../../schemas/records.ts';
import { WEBHOOK_PORTS } from '../../webhooks/address.ts';
import { DELIVERY_TIMEOUT_MS } from '../../webhooks/sender.ts';
import { AUTO_DISABLE_AFTER, RETRY_DELAYS_MS } from '../../webhooks/delivery/schedule.ts';
import { isoTime, listOf, named, resourceHeader } from './common.ts';

/** Webhooks (spec 2.7, 4.5, 6): registration, the record, deliveries and the send-test result. */

const minutes = (ms: number) => (ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`);
const RETRIES = RETRY_DELAYS_MS.map(minutes).join(', ');

const webhookId = z.string().regex(WEBHOOK_ID).describe('Webhook id, `wh_<hex>`.');

export const WebhookIdParamsSchema = z.strictObject({ id: webhookId });

export const CreateWebhookBodySchema = z.strictObject({
  url: z
    .string()
    .max(2048)
    .describe(
      `HTTPS URL that receives the signed POSTs: no credentials, port ${WEBHOOK_PORTS.join(' or ')}, a public host. Private, loopback, ` +
        'link-local, unique-local, multicast, CGNAT and unspecified addresses (IPv4-mapped IPv6 forms included) are refused, in the URL ' +
        'and after DNS resolution, here and again at every delivery.',
    ),
  events: z
    .array(z.enum(WEBHOOK_EVENT_TYPES))
    .min(1)
    .max(WEBHOOK_EVENT_TYPES.length)
    .refine((e) => new Set(e).size === e.length, 'must not repeat an event')
    .describe('The events to receive.'),
});

export const WebhookSchema = named(
  'Webhook',
  z.strictObject({
    ...resourceHeader('webhook'),
    id: webhookId,
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    status: z.enum(['enabled', 'disabled']),
    disabledReason: z.string().nullable().describe(`Why it was disabled, e.g. after ${AUTO_DISABLE_AFTER} consecutive failed deliveries; null while enabled.`),
    disabledAt: isoTime.nullable(),
    consecutiveFailures: z.number().int().min(0).describe(`Failed deliveries since the last success or re-enable; ${AUTO_DISABLE_AFTER} disable the webhook. Test deliveries never count.`),
    lastDeliveryAt: isoTime.nullable(),
    lastDeliveryOutcome: z.enum(DELIVERY_OUTCOMES).nullable(),
    createdAt: isoTime,
    updatedAt: isoTime,
  }),
  `A registered endpoint. Deliveries: a 2xx within ${DELIVERY_TIMEOUT_MS / 1000} s is delivered, redirects are not followed; failures are retried after ${RETRIES}.`,
);

export const WebhookWithSecretSchema = named(
  'WebhookWithSecret',
  z.strictObject({
    ...WebhookSchema.shape,
    secret: z.string().regex(/^whsec_[A-Za-z0-9_-]+$/).describe('The signing secret, `whsec_…`. Shown only in this response: store it now.'),
  }),
  'A webhook with its signing secret, returned once: at creation and by rotate-secret.',
);

export const WebhookListSchema = listOf('WebhookList', WebhookSchema, { total: true });

export const WebhookDeletedSchema = named(
  'WebhookDeleted',
  z.strictObject({ ...resourceHeader('webhook'), id: webhookId, deleted: z.literal(true) }),
);

export const WebhookTestResultSchema = named(
  'WebhookTestResult',
  z.strictObject({
    ...resourceHeader('webhook_test'),
    webhookId,
    eventId: z.string().describe('`ev_<hex>` of the `webhook.test` event sent.'),
    deliveryId: z.string().describe('`whd_<hex>`, the Service-Delivery header sent.'),
    delivered: z.boolean().describe(`Whether the endpoint answered 2xx within ${DELIVERY_TIMEOUT_MS / 1000} s.`),
    httpStatus: z.number().int().nullable().describe('The status the endpoint answered; null when it gave none.'),
    latencyMs: z.number().int().min(0),
    error: z.string().nullable(),
  }),
  'The result of a test delivery. Test deliveries are listed with the others but never retried and never count toward auto-disable.',
);

export const ResendBodySchema = z
  .strictObject({
    event_id: z.string().regex(/^ev_[0-9a-f]+$/).optional().describe('The one event to send again, `ev_<hex>`.'),
    since: isoTime.optional().describe('Send again every event of the webhook\'s types that happened at or after this time.'),
  })
  .refine((b) => (b.event_id === undefined) !== (b.since === undefined), 'give exactly one of event_id and since');

export const WebhookResendSchema = named(
  'WebhookResend',
  z.strictObject({
    ...resourceHeader('webhook_resend'),
    webhookId,
    eventId: z.string().nullable(),
    since: isoTime.nullable(),
  }),
  'A resend, recorded: the events are sent again shortly, each as a new attempt listed in the deliveries, with retries as usual. ' +
    'Only events still retained (30 days) of the webhook\'s types, dataset and audience are sent; while the webhook is disabled, none.',
);

export const DeliveriesQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_DELIVERIES_LIMIT).default(25).describe(`1 to ${MAX_DELIVERIES_LIMIT}, newest first.`),
});

const DeliverySchema = named(
  'WebhookDelivery',
  z.strictObject({
    ...resourceHeader('webhook_delivery'),
    id: z.string().describe('`whd_<hex>`, the Service-Delivery header of the attempt.'),
    eventId: z.string(),
    eventType: z.string(),
    attempt: z.number().int().min(1),
    at: isoTime,
    outcome: z.enum(DELIVERY_OUTCOMES),
    httpStatus: z.number().int().nullable(),
    latencyMs: z.number().int().nullable(),
    error: z.string().nullable(),
    nextRetryAt: isoTime.nullable().describe('When the event is tried again; null when delivered, out of retries, or a test.'),
    test: z.boolean(),
  }),
  'One delivery attempt.',
);

export const DeliveryListSchema = listOf('WebhookDeliveryList', DeliverySchema);
