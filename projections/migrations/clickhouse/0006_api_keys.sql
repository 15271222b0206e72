-- API keys by id, latest control.keys event wins (projections/tables/keys.ts).
CREATE TABLE IF NOT EXISTS api_keys (
  key_id String,
  ts Int64,
  hash String,
  name String,
  plan String,
  scopes String,
  created_at Int64,
  revoked_at Nullable(Int64)
) ENGINE = ReplacingMergeTree(ts)
ORDER BY (key_id);
