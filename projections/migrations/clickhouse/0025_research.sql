-- Backtest requests and runs, event-study results (projections/tables/research.ts).
CREATE TABLE IF NOT EXISTS backtest_requests (
  run_id String,
  version Int64,
  ts Int64,
  key_id String,
  team_id Nullable(String),
  dataset String,
  plan String,
  name Nullable(String),
  spec String,
  created_at Int64,
  cancel_requested_at Nullable(Int64)
) ENGINE = ReplacingMergeTree(version)
ORDER BY (run_id);

CREATE TABLE IF NOT EXISTS backtest_runs (
  run_id String,
  seq Int64,
  ts Int64,
  status String,
  attempt Int64,
  scanned Int64,
  total Int64,
  as_of Nullable(Int64),
  started_at Int64,
  finished_at Nullable(Int64),
  reason Nullable(String),
  result Nullable(String)
) ENGINE = ReplacingMergeTree(seq)
ORDER BY (run_id);

CREATE TABLE IF NOT EXISTS event_studies (
  slug String,
  as_of Int64,
  ts Int64,
  result String
) ENGINE = ReplacingMergeTree(as_of)
ORDER BY (slug);
