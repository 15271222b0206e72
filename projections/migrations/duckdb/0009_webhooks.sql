-- Webhooks, latest control.webhooks event wins; delivery attempts (projections/tables/webhooks.ts).
CREATE TABLE IF NOT EXISTS webhooks (
  webhook_id VARCHAR NOT NULL,
  version BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  key_id VARCHAR NOT NULL,
  team_id VARCHAR,
  dataset VARCHAR NOT NULL,
  url VARCHAR NOT NULL,
  events VARCHAR NOT NULL,
  sealed_secret VARCHAR NOT NULL,
  status VARCHAR NOT NULL,
  disabled_reason VARCHAR,
  disabled_at BIGINT,
  created_at BIGINT NOT NULL,
  enabled_at BIGINT NOT NULL,
  PRIMARY KEY (webhook_id)
);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  delivery_id VARCHAR NOT NULL,
  webhook_id VARCHAR NOT NULL,
  event_id VARCHAR NOT NULL,
  event_type VARCHAR NOT NULL,
  attempt BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  outcome VARCHAR NOT NULL,
  http_status BIGINT,
  latency_ms BIGINT,
  error VARCHAR,
  next_retry_at BIGINT,
  test BOOLEAN NOT NULL,
  PRIMARY KEY (delivery_id)
);
