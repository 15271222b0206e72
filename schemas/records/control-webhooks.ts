import { z } from 'zod';
import { eventTime } from './primitives.ts';

/**
 * Control events of webhooks (control.webhooks). Registration, deletion, disabling (by the
 * owner's delivery failures or an operator) and re-enabling, and secret rotation are only
 * these events, so a replay rebuilds every webhook (DESIGN.md §3, rule 4). Each event
 * carries the whole webhook, so the projection is a function of one event. The signing
 * secret is sealed with the service key (webhooks/secret-box.ts): never in clear in the log.
 * Field names match schemas/avro/webhook-event/v1.avsc one to one.
 */

export const WEBHOOK_ACTIONS = ['create', 'delete', 'disable', 'enable', 'rotate_secret', 'resend'] as const;
export type WebhookAction = (typeof WEBHOOK_ACTIONS)[number];
export const WEBHOOK_STATUSES = ['enabled', 'disabled', 'deleted'] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];
/** The events a webhook may subscribe to (spec 4.5). */
export const WEBHOOK_EVENT_TYPES = ['signal.created', 'token.score.updated', 'cohort.convergence'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_ID = /^wh_[0-9a-f]{24}$/;

export const WebhookEventSchema = z
  .strictObject({
    webhookId: z.string().regex(WEBHOOK_ID, 'must be wh_<hex>'),
    action: z.enum(WEBHOOK_ACTIONS),
    /** One per webhook change, counting from 1: the projection keeps the highest. */
    version: z.number().int().min(1),
    keyId: z.string().min(1),
    /** The owner key's team at registration (keys never change team): shared cohorts' events reach it. */
    teamId: z.string().min(1).nullable(),
    dataset: z.string().min(1),
    url: z.string().min(1).max(2048),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1),
    /** The signing secret sealed with the service key (AES-256-GCM). */
    sealedSecret: z.string().min(1),
    status: z.enum(WEBHOOK_STATUSES),
    disabledReason: z.string().min(1).max(500).nullable(),
    /** On `resend`: the one event to send again, or null with resendSince. */
    resendEventId: z.string().regex(/^ev_[0-9a-f]+$/).nullable(),
    /** On `resend`: send again every event of the webhook's types since this time. */
    resendSince: eventTime.nullable(),
    createdAt: eventTime,
    /** When it was last created or re-enabled: consecutive failures count from here. */
    enabledAt: eventTime,
    ts: eventTime,
  })
  .refine((e) => (e.action === 'resend') === (e.resendEventId !== null || e.resendSince !== null), {
    message: 'a resend, and only a resend, names an event or a time',
    path: ['resendEventId'],
  })
  .refine((e) => (e.status === 'disabled') === (e.disabledReason !== null), {
    message: 'a disabled webhook, and only one, has its reason',
    path: ['disabledReason'],
  });
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;
