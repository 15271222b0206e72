import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';

/** Webhooks by id; every event carries the whole webhook, so the newest version is the row. */
export const webhooksProjection = defineProjection({
  name: 'webhooks',
  topics: [TOPICS.webhooks.name],
  tables: ['webhooks'],
  toRows: (e) => [
    {
      table: 'webhooks',
      row: {
        webhook_id: e.webhookId,
        version: e.version,
        ts: e.ts,
        key_id: e.keyId,
        team_id: e.teamId,
        dataset: e.dataset,
        url: e.url,
        events: JSON.stringify(e.events),
        sealed_secret: e.sealedSecret,
        status: e.status,
        disabled_reason: e.disabledReason,
        disabled_at: e.status === 'disabled' ? e.ts : null,
        created_at: e.createdAt,
        enabled_at: e.enabledAt,
      },
    },
  ],
});

/** Delivery attempts, one row each. */
export const webhookDeliveriesProjection = defineProjection({
  name: 'webhook-deliveries',
  topics: [TOPICS.webhookDeliveries.name],
  tables: ['webhook_deliveries'],
  toRows: (d) => [
    {
      table: 'webhook_deliveries',
      row: {
        delivery_id: d.deliveryId,
        webhook_id: d.webhookId,
        event_id: d.eventId,
        event_type: d.eventType,
        attempt: d.attempt,
        ts: d.ts,
        outcome: d.outcome,
        http_status: d.httpStatus,
        latency_ms: d.latencyMs,
        error: d.error,
        next_retry_at: d.nextRetryAt,
        test: d.test,
      },
    },
  ],
});
