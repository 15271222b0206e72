-- Teams by id, from control.teams (projections/tables/keys.ts).
CREATE TABLE IF NOT EXISTS teams (
  team_id String,
  ts Int64,
  name String
) ENGINE = ReplacingMergeTree(ts)
ORDER BY (team_id);
