-- Every quant snapshot's full record over time, for the token snapshot as of a past time
-- (projections/tables/quant.ts snapshotRecords). Kept apart from snapshot_history, whose
-- rule-field columns research scans read without this text.
CREATE TABLE IF NOT EXISTS snapshot_records (
  token_id VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  "version" BIGINT NOT NULL,
  snapshot VARCHAR NOT NULL,
  PRIMARY KEY (token_id, ts)
);
