import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context } from 'koa';
import { deliveriesOf, deliveryStats, getWebhook, webhooksOfKey } from '../../projections/read-models/webhooks.ts';
import type { WebhookRow } from '../../projections/tables/webhooks.ts';
import { DATASET, header, iso } from '../../presenters/resource.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { WebhookEventSchema, type WebhookDelivery, type WebhookEventType } from '../../schemas/records.ts';
import { checkWebhookUrl, pickPublicAddress } from '../../webhooks/address.ts';
import { appendWebhookEvent, nextEvent, webhookFromRow } from '../../webhooks/commands.ts';
import { deliveryHeaders, eventBody, newDeliveryId } from '../../webhooks/payload.ts';
import { postSigned, systemResolver } from '../../webhooks/sender.ts';
import { newSigningSecret } from '../../webhooks/signature.ts';
import { appendEvent } from '../../projections/control-events.ts';
import { ApiError } from '../errors.ts';
import { defineRoute } from '../http/route.ts';
import { keyOf } from '../middleware/auth.ts';
import { PLANS } from '../plans.ts';
import {
  CreateWebhookBodySchema,
  ResendBodySchema,
  DeliveriesQuerySchema,
  DeliveryListSchema,
  WebhookDeletedSchema,
  WebhookIdParamsSchema,
  WebhookListSchema,
  WebhookResendSchema,
  WebhookSchema,
  WebhookTestResultSchema,
  WebhookWithSecretSchema,
} from '../schemas/webhooks.ts';
import { untilApplied } from '../services/read-your-writes.ts';
import type { RouteDeps, WebhookDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

/** Webhooks (spec 4.5): a key sees and changes only the webhooks it registered. */
export function webhookRoutes({ store, log, now, webhooks: deps }: RouteDeps): RouteGroup {
  const need = (): WebhookDeps => {
    if (deps === undefined) throw new ApiError('UPSTREAM_UNAVAILABLE', 'webhooks are not configured in this process');
    return deps;
  };

  async function present(row: WebhookRow) {
    const stats = await deliveryStats(store, row);
    return {
      ...header('webhook'),
      id: row.webhook_id,
      url: row.url,
      events: JSON.parse(row.events) as WebhookEventType[],
      status: row.status === 'disabled' ? ('disabled' as const) : ('enabled' as const),
      disabledReason: row.disabled_reason,
      disabledAt: iso(row.disabled_at),
      consecutiveFailures: stats.consecutiveFailures,
      lastDeliveryAt: iso(stats.lastDelivery?.ts ?? null),
      lastDeliveryOutcome: (stats.lastDelivery?.outcome ?? null) as WebhookDelivery['outcome'] | null,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.ts),
    };
  }

  /** The caller's webhook `id` (not deleted), or 404: another key's webhook does not exist for this one. */
  async function ownWebhook(ctx: Context, id: string): Promise<WebhookRow> {
    const key = keyOf(ctx);
    const row = await getWebhook(store, id);
    if (row === null || row.key_id !== key.id || row.dataset !== DATASET || row.status === 'deleted') throw new ApiError('NOT_FOUND', `no webhook ${id}`);
    return row;
  }

  /** Waits until the projection shows version `version` of the webhook. */
  const applied = (id: string, version: number): Promise<WebhookRow> => untilApplied(() => getWebhook(store, id), version, `the change to ${id}`);

  /** The URL refused as a VALIDATION issue at body.url. */
  function invalidUrl(reason: string): ApiError {
    return new ApiError('VALIDATION', `url ${reason}`, { issues: [{ path: 'body.url', code: 'invalid_format', message: `url ${reason}` }] });
  }

  async function checkUrl(url: string): Promise<void> {
    const { policy, resolve = systemResolver } = need();
    const checked = checkWebhookUrl(url, policy);
    if (!checked.ok) throw invalidUrl(checked.reason);
    if (policy.allowPrivate || isIP(checked.host) !== 0) return;
    let addresses: string[];
    try {
      addresses = await resolve(checked.host);
    } catch {
      throw invalidUrl('host does not resolve');
    }
    const picked = pickPublicAddress(addresses, policy);
    if (!picked.ok) throw invalidUrl(picked.reason);
  }

  const list = defineRoute({
    method: 'GET',
    path: '/v1/webhooks',
    operationId: 'listWebhooks',
    tag: 'Webhooks',
    summary: 'List webhooks',
    description: "The webhooks the calling key registered in its dataset, oldest first, with each one's delivery state.",
    response: { schema: WebhookListSchema, description: 'Every webhook of the key (no paging: a plan allows at most 50).' },
    handler: async ({ ctx }) => {
      const rows = await webhooksOfKey(store, keyOf(ctx).id);
      const data = await Promise.all(rows.filter((r) => r.dataset === DATASET).map(present));
      return { ...header('list'), data, hasMore: false, nextCursor: null, total: data.length };
    },
  });

  const one = defineRoute({
    method: 'GET',
    path: '/v1/webhooks/:id',
    operationId: 'getWebhook',
    tag: 'Webhooks',
    summary: 'One webhook',
    description: 'The webhook with its delivery state; after an auto-disable, `disabled_reason` says why.',
    params: WebhookIdParamsSchema,
    errors: ['NOT_FOUND'],
    response: { schema: WebhookSchema, description: 'The webhook.' },
    handler: async ({ params, ctx }) => present(await ownWebhook(ctx, params.id)),
  });

  const create = defineRoute({
    method: 'POST',
    path: '/v1/webhooks',
    operationId: 'createWebhook',
    tag: 'Webhooks',
    summary: 'Register a webhook',
    description:
      'Registers an endpoint for the given events and returns its signing secret, once. Answers after the registration is applied, ' +
      'so the next GET shows it. 409 LIMIT_REACHED when the key already has as many webhooks as its plan allows (Free 2, Pro 10, Team 50).',
    body: CreateWebhookBodySchema,
    errors: ['LIMIT_REACHED'],
    response: { status: 201, schema: WebhookWithSecretSchema, description: 'The webhook, with its signing secret.' },
    handler: async ({ body, ctx }) => {
      const { secrets } = need();
      const key = keyOf(ctx);
      await checkUrl(body.url);
      const quota = PLANS[key.plan].features.webhooks;
      if ((await webhooksOfKey(store, key.id)).length >= quota) {
        throw new ApiError('LIMIT_REACHED', `the ${PLANS[key.plan].label} plan allows ${quota} webhooks per key`);
      }
      const webhookId = `wh_${randomBytes(12).toString('hex')}`;
      const secret = newSigningSecret();
      const at = now();
      const event = WebhookEventSchema.parse({
        webhookId,
        action: 'create',
        version: 1,
        keyId: key.id,
        teamId: key.team?.id ?? null,
        dataset: DATASET,
        url: body.url,
        events: body.events,
        sealedSecret: secrets.seal(secret, webhookId),
        status: 'enabled',
        disabledReason: null,
        resendEventId: null,
        resendSince: null,
        createdAt: at,
        enabledAt: at,
        ts: at,
      });
      await appendWebhookEvent(log, need().codec, event);
      return { ...(await present(await applied(webhookId, 1))), secret };
    },
  });

  const remove = defineRoute({
    method: 'DELETE',
    path: '/v1/webhooks/:id',
    operationId: 'deleteWebhook',
    tag: 'Webhooks',
    summary: 'Delete a webhook',
    description: 'Stops every delivery to it, pending retries included. Answers after the deletion is applied.',
    params: WebhookIdParamsSchema,
    errors: ['NOT_FOUND'],
    response: { schema: WebhookDeletedSchema, description: 'The webhook is deleted.' },
    handler: async ({ params, ctx }) => {
      const row = await ownWebhook(ctx, params.id);
      const event = nextEvent(webhookFromRow(row), 'delete', now(), { status: 'deleted', disabledReason: null });
      await appendWebhookEvent(log, need().codec, event);
      await applied(row.webhook_id, event.version);
      return { ...header('webhook'), id: row.webhook_id, deleted: true as const };
    },
  });

  const enable = defineRoute({
    method: 'POST',
    path: '/v1/webhooks/:id/enable',
    operationId: 'enableWebhook',
    tag: 'Webhooks',
    summary: 'Re-enable a webhook',
    description: 'Re-enables a disabled webhook: deliveries resume with new events and the failure count starts again. An enabled webhook is returned unchanged.',
    params: WebhookIdParamsSchema,
    errors: ['NOT_FOUND'],
    response: { schema: WebhookSchema, description: 'The webhook, enabled.' },
    handler: async ({ params, ctx }) => {
      const row = await ownWebhook(ctx, params.id);
      if (row.status === 'enabled') return present(row);
      const at = now();
      const event = nextEvent(webhookFromRow(row), 'enable', at, { status: 'enabled', disabledReason: null, enabledAt: Math.max(at, row.ts) });
      await appendWebhookEvent(log, need().codec, event);
      return present(await applied(row.webhook_id, event.version));
    },
  });

  const rotate = defineRoute({
    method: 'POST',
    path: '/v1/webhooks/:id/rotate-secret',
    operationId: 'rotateWebhookSecret',
    tag: 'Webhooks',
    summary: 'Rotate the signing secret',
    description:
      'Replaces the signing secret and returns the new one, once. For 24 hours after the rotation every delivery carries a `v1` signature ' +
      'with each of the two secrets (the old one keeps verifying while receivers deploy the new one); after that, the new one only. ' +
      '`webhook.test` is signed with the current secret only.',
    params: WebhookIdParamsSchema,
    errors: ['NOT_FOUND'],
    response: { schema: WebhookWithSecretSchema, description: 'The webhook, with its new signing secret.' },
    handler: async ({ params, ctx }) => {
      const { secrets, codec } = need();
      const row = await ownWebhook(ctx, params.id);
      const secret = newSigningSecret();
      const event = nextEvent(webhookFromRow(row), 'rotate_secret', now(), { sealedSecret: secrets.seal(secret, row.webhook_id) });
      await appendWebhookEvent(log, codec, event);
      return { ...(await present(await applied(row.webhook_id, event.version))), secret };
    },
  });

  const test = defineRoute({
    method: 'POST',
    path: '/v1/webhooks/:id/test',
    operationId: 'testWebhook',
    tag: 'Webhooks',
    summary: 'Send a test event',
    description:
      'Sends a signed `webhook.test` event now, with the same checks, headers and time limit as every delivery, and reports what the ' +
      'endpoint answered. Also for a disabled webhook; never retried and never counted toward auto-disable.',
    params: WebhookIdParamsSchema,
    errors: ['NOT_FOUND'],
    response: { schema: WebhookTestResultSchema, description: 'What the endpoint answered.' },
    handler: async ({ params, ctx }) => {
      const { secrets, codec, policy, resolve, ca } = need();
      const row = await ownWebhook(ctx, params.id);
      const at = now();
      const eventId = `ev_${randomBytes(12).toString('hex')}`;
      const deliveryId = newDeliveryId();
      const body = eventBody({
        eventId,
        type: 'webhook.test',
        ts: at,
        dataset: row.dataset,
        data: JSON.stringify({ webhook_id: row.webhook_id, message: 'A test event sent by POST /v1/webhooks/{id}/test.' }),
      });
      const headers = deliveryHeaders('webhook.test', deliveryId, [secrets.open(row.sealed_secret, row.webhook_id)], Math.floor(at / 1000), body);
      const result = await postSigned(row.url, body, headers, { policy, resolve, ca });
      const record: WebhookDelivery = {
        deliveryId,
        webhookId: row.webhook_id,
        eventId,
        eventType: 'webhook.test',
        attempt: 1,
        ts: now(),
        outcome: result.delivered ? 'delivered' : 'failed',
        httpStatus: result.status,
        latencyMs: result.latencyMs,
        error: result.error?.slice(0, 500) ?? null,
        nextRetryAt: null,
        test: true,
        resendOf: null,
      };
      await appendEvent(log, codec, TOPICS.webhookDeliveries.name, row.webhook_id, record);
      return {
        ...header('webhook_test'),
        webhookId: row.webhook_id,
        eventId,
        deliveryId,
        delivered: result.delivered,
        httpStatus: result.status,
        latencyMs: result.latencyMs,
        error: result.error,
      };
    },
  });

  const resend = defineRoute({
    method: 'POST',
    path: '/v1/webhooks/:id/resend',
    operationId: 'resendWebhookEvents',
    tag: 'Webhooks',
    summary: 'Send events again',
    description: 'Sends one event (`event_id`) or every event since a time (`since`) again, signed anew. Answers once the request is recorded.',
    params: WebhookIdParamsSchema,
    body: ResendBodySchema,
    errors: ['NOT_FOUND'],
    response: { status: 202, schema: WebhookResendSchema, description: 'The resend is recorded.' },
    handler: async ({ params, body, ctx }) => {
      const row = await ownWebhook(ctx, params.id);
      const since = body.since === undefined ? null : Date.parse(body.since);
      const event = nextEvent(webhookFromRow(row), 'resend', now(), { resendEventId: body.event_id ?? null, resendSince: since });
      await appendWebhookEvent(log, need().codec, event);
      await applied(row.webhook_id, event.version);
      return { ...header('webhook_resend'), webhookId: row.webhook_id, eventId: body.event_id ?? null, since: iso(since) };
    },
  });

  const deliveries = defineRoute({
    method: 'GET',
    path: '/v1/webhooks/:id/deliveries',
    operationId: 'listWebhookDeliveries',
    tag: 'Webhooks',
    summary: "A webhook's delivery attempts",
    description: 'Every attempt, newest first: its outcome, the HTTP status, latency, error and when the event is tried next.',
    params: WebhookIdParamsSchema,
    query: DeliveriesQuerySchema,
    errors: ['NOT_FOUND'],
    response: { schema: DeliveryListSchema, description: 'The latest attempts.' },
    handler: async ({ params, query, ctx }) => {
      const row = await ownWebhook(ctx, params.id);
      const rows = await deliveriesOf(store, row.webhook_id, query.limit);
      return {
        ...header('list'),
        data: rows.map((d) => ({
          ...header('webhook_delivery'),
          id: d.delivery_id,
          eventId: d.event_id,
          eventType: d.event_type,
          attempt: d.attempt,
          at: iso(d.ts),
          outcome: d.outcome as WebhookDelivery['outcome'],
          httpStatus: d.http_status,
          latencyMs: d.latency_ms,
          error: d.error,
          nextRetryAt: iso(d.next_retry_at),
          test: d.test,
        })),
        hasMore: false,
        nextCursor: null,
      };
    },
  });

  return { routes: [list, one, create, remove, enable, rotate, test, resend, deliveries] };
}
