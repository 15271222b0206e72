-- The events of done backtest runs, in the parts research.backtest-events records them in.
CREATE TABLE IF NOT EXISTS backtest_events (
  run_id String,
  part Int64,
  parts Int64,
  ts Int64,
  events String
) ENGINE = ReplacingMergeTree(ts)
ORDER BY (run_id, part);
