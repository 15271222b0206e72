import type { AnalyticalStore } from '../../infra/store/port.ts';
import { column, columns, int64, sql, table } from '../../infra/store/sql-literal.ts';
import type { ProjectionTables } from '../tables.ts';
import { webhookDeliveries, webhooks, type WebhookDeliveryRow, type WebhookRow } from '../tables/webhooks.ts';

type Store = AnalyticalStore<ProjectionTables>;

/** A key's webhooks that are not deleted, oldest first. */
export async function webhooksOfKey(store: Store, keyId: string): Promise<WebhookRow[]> {
  return store.query<WebhookRow>(
    sql`SELECT ${columns(webhooks)} FROM ${table(webhooks)}
        WHERE ${column(webhooks, 'key_id')} = ${keyId} AND ${column(webhooks, 'status')} <> 'deleted'
        ORDER BY ${column(webhooks, 'created_at')}, ${column(webhooks, 'webhook_id')}`,
  );
}

/** One webhook in any status, deleted included (so a write can wait for its deletion); null when unknown. */
export async function getWebhook(store: Store, id: string): Promise<WebhookRow | null> {
  const rows = await store.query<WebhookRow>(sql`SELECT ${columns(webhooks)} FROM ${table(webhooks)} WHERE ${column(webhooks, 'webhook_id')} = ${id}`);
  return rows[0] ?? null;
}

/** Every webhook that is not deleted: what the delivery role serves. */
export async function liveWebhooks(store: Store): Promise<WebhookRow[]> {
  return store.query<WebhookRow>(
    sql`SELECT ${columns(webhooks)} FROM ${table(webhooks)} WHERE ${column(webhooks, 'status')} <> 'deleted' ORDER BY ${column(webhooks, 'webhook_id')}`,
  );
}

export const MAX_DELIVERIES_LIMIT = 100;

/** A webhook's delivery attempts, newest first. */
export async function deliveriesOf(store: Store, webhookId: string, limit: number): Promise<WebhookDeliveryRow[]> {
  return store.query<WebhookDeliveryRow>(
    sql`SELECT ${columns(webhookDeliveries)} FROM ${table(webhookDeliveries)}
        WHERE ${column(webhookDeliveries, 'webhook_id')} = ${webhookId}
        ORDER BY ${column(webhookDeliveries, 'ts')} DESC, ${column(webhookDeliveries, 'attempt')} DESC, ${column(webhookDeliveries, 'delivery_id')} DESC
        LIMIT ${int64(Math.min(limit, MAX_DELIVERIES_LIMIT))}`,
  );
}

export interface DeliveryStats {
  /** Failed attempts (tests excluded) since the last delivered one and since the webhook was (re-)enabled. */
  consecutiveFailures: number;
  lastDelivery: WebhookDeliveryRow | null;
}

/** The failure streak and latest attempt of a webhook (test deliveries never count). */
export async function deliveryStats(store: Store, hook: WebhookRow): Promise<DeliveryStats> {
  const d = webhookDeliveries;
  const id = hook.webhook_id;
  const last = await store.query<WebhookDeliveryRow>(
    sql`SELECT ${columns(d)} FROM ${table(d)} WHERE ${column(d, 'webhook_id')} = ${id} AND ${column(d, 'test')} = ${false}
        ORDER BY ${column(d, 'ts')} DESC, ${column(d, 'attempt')} DESC, ${column(d, 'delivery_id')} DESC LIMIT 1`,
  );
  const delivered = await store.query<{ at: number | null }>(
    sql`SELECT max(${column(d, 'ts')}) AS at FROM ${table(d)}
        WHERE ${column(d, 'webhook_id')} = ${id} AND ${column(d, 'test')} = ${false} AND ${column(d, 'outcome')} = 'delivered'`,
  );
  const since = Math.max(hook.enabled_at, Number(delivered[0]?.at ?? 0));
  const failed = await store.query<{ n: number }>(
    sql`SELECT count(*) AS n FROM ${table(d)}
        WHERE ${column(d, 'webhook_id')} = ${id} AND ${column(d, 'test')} = ${false} AND ${column(d, 'outcome')} = 'failed'
          AND ${column(d, 'ts')} >= ${int64(since)}`,
  );
  return { consecutiveFailures: Number(failed[0]?.n ?? 0), lastDelivery: last[0] ?? null };
}
