-- Outcomes lose their primary-key index (projections/tables/social.ts, keyIndex): DuckDB holds
-- it in memory, and a week of outcomes filled the store's memory limit with it. DuckDB cannot
-- drop a constraint, so the rows move to a table made without one; upserts now merge on
-- outcome_id instead.
CREATE TABLE outcomes_without_key_index (
  outcome_id VARCHAR NOT NULL,
  subject_kind VARCHAR NOT NULL,
  subject_id VARCHAR NOT NULL,
  token_id VARCHAR NOT NULL,
  subject_ts BIGINT NOT NULL,
  horizon VARCHAR NOT NULL,
  entry_price DOUBLE NOT NULL,
  forward_return DOUBLE,
  max_drawdown DOUBLE,
  peak_return DOUBLE,
  time_to_peak_ms BIGINT,
  died BOOLEAN NOT NULL,
  last_price DOUBLE,
  resolved_at BIGINT NOT NULL
);
INSERT INTO outcomes_without_key_index SELECT * FROM outcomes;
DROP TABLE outcomes;
ALTER TABLE outcomes_without_key_index RENAME TO outcomes;
