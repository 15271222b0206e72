-- Teams by id, from control.teams (projections/tables/keys.ts).
CREATE TABLE IF NOT EXISTS teams (
  team_id VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  name VARCHAR NOT NULL,
  PRIMARY KEY (team_id)
);
