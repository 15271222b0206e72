-- Backtest requests and runs, event-study results (projections/tables/research.ts).
CREATE TABLE IF NOT EXISTS backtest_requests (
  run_id VARCHAR NOT NULL,
  version BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  key_id VARCHAR NOT NULL,
  team_id VARCHAR,
  dataset VARCHAR NOT NULL,
  plan VARCHAR NOT NULL,
  name VARCHAR,
  spec VARCHAR NOT NULL,
  created_at BIGINT NOT NULL,
  cancel_requested_at BIGINT,
  PRIMARY KEY (run_id)
);

CREATE TABLE IF NOT EXISTS backtest_runs (
  run_id VARCHAR NOT NULL,
  seq BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  status VARCHAR NOT NULL,
  attempt BIGINT NOT NULL,
  scanned BIGINT NOT NULL,
  total BIGINT NOT NULL,
  as_of BIGINT,
  started_at BIGINT NOT NULL,
  finished_at BIGINT,
  reason VARCHAR,
  result VARCHAR,
  PRIMARY KEY (run_id)
);

CREATE TABLE IF NOT EXISTS event_studies (
  slug VARCHAR NOT NULL,
  as_of BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  result VARCHAR NOT NULL,
  PRIMARY KEY (slug)
);
