import { defineTable, type RowOf } from '../../infra/store/table.ts';

/**
 * Webhooks as of their latest control.webhooks event (schemas/records/control-webhooks.ts).
 * `secret` is the sealed signing secret, never the secret; `events` is a JSON array. A
 * deletion is a later version with status `deleted`, so a replay keeps it.
 */
export const webhooks = defineTable({
  name: 'webhooks',
  columns: {
    webhook_id: 'string',
    version: 'int64',
    ts: 'int64',
    key_id: 'string',
    team_id: 'string?',
    dataset: 'string',
    url: 'string',
    events: 'json',
    sealed_secret: 'string',
    status: 'string',
    disabled_reason: 'string?',
    disabled_at: 'int64?',
    created_at: 'int64',
    enabled_at: 'int64',
  },
  key: ['webhook_id'],
  version: 'version',
});
export type WebhookRow = RowOf<typeof webhooks>;

/**
 * Delivery attempts (webhooks.deliveries): one row per attempt, `whd_` id. What the delivery
 * role's schedule is rebuilt from, and what GET /v1/webhooks/{id}/deliveries lists.
 */
export const webhookDeliveries = defineTable({
  name: 'webhook_deliveries',
  columns: {
    delivery_id: 'string',
    webhook_id: 'string',
    event_id: 'string',
    event_type: 'string',
    attempt: 'int64',
    ts: 'int64',
    outcome: 'string',
    http_status: 'int64?',
    latency_ms: 'int64?',
    error: 'string?',
    next_retry_at: 'int64?',
    test: 'bool',
  },
  key: ['delivery_id'],
  version: 'ts',
});
export type WebhookDeliveryRow = RowOf<typeof webhookDeliveries>;
