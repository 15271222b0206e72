-- The events of done backtest runs, in the parts research.backtest-events records them in.
CREATE TABLE IF NOT EXISTS backtest_events (
  run_id VARCHAR NOT NULL,
  part BIGINT NOT NULL,
  parts BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  events VARCHAR NOT NULL,
  PRIMARY KEY (run_id, part)
);
