-- Token metadata and feature snapshots (see projections/tables.ts). ReplacingMergeTree keeps
-- the highest version per sorting key when parts merge; reads add FINAL to see that already.
-- Booleans are UInt8 (18.16 has no Bool); times are Int64 epoch milliseconds.
CREATE TABLE IF NOT EXISTS tokens (
  token_id String,
  ts Int64,
  symbol String,
  name String,
  chain String,
  address String,
  logo_url Nullable(String),
  status String,
  narrative String,
  source_url Nullable(String)
) ENGINE = ReplacingMergeTree(ts)
ORDER BY token_id;

-- Monthly partitions keep merges and retention cheap; ts is in the key, so replacing within
-- a partition is enough.
CREATE TABLE IF NOT EXISTS snapshots (
  token_id String,
  ts Int64,
  version Int64,
  price_usd Nullable(Float64),
  momentum Nullable(Float64),
  crowding Nullable(Float64),
  has_market_data UInt8,
  features String
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(toDateTime(intDiv(ts, 1000), 'UTC'))
ORDER BY (token_id, ts);
