-- API keys by id, latest control.keys event wins (projections/tables/keys.ts).
CREATE TABLE IF NOT EXISTS api_keys (
  key_id VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  hash VARCHAR NOT NULL,
  name VARCHAR NOT NULL,
  plan VARCHAR NOT NULL,
  scopes VARCHAR NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT,
  PRIMARY KEY (key_id)
);
