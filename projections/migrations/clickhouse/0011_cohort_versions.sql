-- Every membership version of every cohort, for cohorts as of a past time
-- (projections/tables/social.ts cohortVersions); `cohorts` keeps the latest only.
CREATE TABLE IF NOT EXISTS cohort_versions (
  cohort_id String,
  kind String,
  name String,
  owner_key_id Nullable(String),
  team_id Nullable(String),
  members String,
  version Int64,
  ts Int64,
  rule String,
  deleted UInt8,
  command_id Nullable(String)
) ENGINE = ReplacingMergeTree(ts)
ORDER BY (cohort_id, version);
