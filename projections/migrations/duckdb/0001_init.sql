-- Token metadata and feature snapshots; the primary key is the natural key the upsert
-- conflicts on (see projections/tables.ts).
CREATE TABLE IF NOT EXISTS tokens (
  token_id VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  symbol VARCHAR NOT NULL,
  name VARCHAR NOT NULL,
  chain VARCHAR NOT NULL,
  address VARCHAR NOT NULL,
  logo_url VARCHAR,
  status VARCHAR NOT NULL,
  narrative VARCHAR NOT NULL,
  source_url VARCHAR,
  PRIMARY KEY (token_id)
);

CREATE TABLE IF NOT EXISTS snapshots (
  token_id VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  version BIGINT NOT NULL,
  price_usd DOUBLE,
  momentum DOUBLE,
  crowding DOUBLE,
  has_market_data BOOLEAN NOT NULL,
  features VARCHAR NOT NULL,
  PRIMARY KEY (token_id, ts)
);
