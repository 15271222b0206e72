-- Every quant snapshot's full record over time, for the token snapshot as of a past time
-- (projections/tables/quant.ts snapshotRecords). Kept apart from snapshot_history, whose
-- rule-field columns research scans read without this text.
CREATE TABLE IF NOT EXISTS snapshot_records (
  token_id String,
  ts Int64,
  version Int64,
  snapshot String
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(toDateTime(intDiv(ts, 1000), 'UTC'))
ORDER BY (token_id, ts);
