-- Teams and the team of each key (projections/tables/keys.ts).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS team_id VARCHAR;
CREATE TABLE IF NOT EXISTS teams (
  team_id VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  name VARCHAR NOT NULL,
  PRIMARY KEY (team_id)
);
