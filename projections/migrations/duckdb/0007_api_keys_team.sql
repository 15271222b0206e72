-- The team of each key (projections/tables/keys.ts).
ALTER TABLE api_keys ADD COLUMN IF NOT EXISTS team_id VARCHAR;
