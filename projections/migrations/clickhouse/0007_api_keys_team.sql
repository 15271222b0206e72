-- The team of each key (projections/tables/keys.ts). ClickHouse 18.16 has no IF NOT EXISTS
-- on ADD COLUMN, so this file holds this one statement: it is applied whole or not at all.
ALTER TABLE api_keys ADD COLUMN team_id Nullable(String);
