import { appendEvent } from '../projections/control-events.ts';
import type { EventLog } from '../infra/log/port.ts';
import type { WebhookRow } from '../projections/tables/webhooks.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { Codec } from '../schemas/codec.ts';
import { WebhookEventSchema, type WebhookEvent, type WebhookEventType } from '../schemas/records.ts';

/**
 * Webhook changes as control events (control.webhooks), appended by the API and by the
 * delivery role (auto-disable). Each event carries the whole webhook at its next version.
 */

export function webhookFromRow(row: WebhookRow): Omit<WebhookEvent, 'action'> {
  return {
    webhookId: row.webhook_id,
    version: row.version,
    keyId: row.key_id,
    teamId: row.team_id,
    dataset: row.dataset,
    url: row.url,
    events: JSON.parse(row.events) as WebhookEventType[],
    sealedSecret: row.sealed_secret,
    // The projection stores only validated events, whose status is one of WEBHOOK_STATUSES.
    status: row.status as WebhookEvent['status'],
    disabledReason: row.disabled_reason,
    resendEventId: null,
    resendSince: null,
    createdAt: row.created_at,
    enabledAt: row.enabled_at,
    ts: row.ts,
  };
}

/** The next event of a webhook: its current state, changed, one version later, never before the last change. */
export function nextEvent(current: Omit<WebhookEvent, 'action'>, action: WebhookEvent['action'], at: number, change: Partial<WebhookEvent>): WebhookEvent {
  const fresh = { resendEventId: null, resendSince: null };
  return WebhookEventSchema.parse({ ...current, ...fresh, ...change, action, version: current.version + 1, ts: Math.max(at, current.ts) });
}

export async function appendWebhookEvent(log: EventLog, codec: Codec, event: WebhookEvent): Promise<void> {
  await appendEvent(log, codec, TOPICS.webhooks.name, event.webhookId, WebhookEventSchema.parse(event));
}
