-- Webhooks, latest control.webhooks event wins; delivery attempts (projections/tables/webhooks.ts).
CREATE TABLE IF NOT EXISTS webhooks (
  webhook_id String,
  version Int64,
  ts Int64,
  key_id String,
  team_id Nullable(String),
  dataset String,
  url String,
  events String,
  sealed_secret String,
  status String,
  disabled_reason Nullable(String),
  disabled_at Nullable(Int64),
  created_at Int64,
  enabled_at Int64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (webhook_id);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  delivery_id String,
  webhook_id String,
  event_id String,
  event_type String,
  attempt Int64,
  ts Int64,
  outcome String,
  http_status Nullable(Int64),
  latency_ms Nullable(Int64),
  error Nullable(String),
  next_retry_at Nullable(Int64),
  test UInt8
) ENGINE = ReplacingMergeTree(ts)
ORDER BY (delivery_id);
