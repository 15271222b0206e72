-- Every membership version of every cohort, for cohorts as of a past time
-- (projections/tables/social.ts cohortVersions); `cohorts` keeps the latest only.
CREATE TABLE IF NOT EXISTS cohort_versions (
  cohort_id VARCHAR NOT NULL,
  kind VARCHAR NOT NULL,
  name VARCHAR NOT NULL,
  owner_key_id VARCHAR,
  team_id VARCHAR,
  members VARCHAR NOT NULL,
  version BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  rule VARCHAR NOT NULL,
  deleted BOOLEAN NOT NULL,
  command_id VARCHAR,
  PRIMARY KEY (cohort_id, version)
);
