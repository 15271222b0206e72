-- Teams and the team of each key (projections/tables/keys.ts).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS team_id Nullable(String);
CREATE TABLE IF NOT EXISTS teams (
  team_id String,
  ts Int64,
  name String
) ENGINE = ReplacingMergeTree(ts)
ORDER BY (team_id);
