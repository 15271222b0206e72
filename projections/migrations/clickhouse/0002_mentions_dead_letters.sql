-- Mentions and dead letters (see projections/tables.ts). No monthly partitions: ts is the
-- version, not part of the key, and ReplacingMergeTree only replaces within a partition.
-- Quoted names are SQL keywords.
CREATE TABLE IF NOT EXISTS mentions (
  mention_id String,
  post_id String,
  author_id String,
  author_handle String,
  token_id String,
  ref String,
  ref_kind String,
  post_kind String,
  engagement Int64,
  ts Int64
) ENGINE = ReplacingMergeTree(ts)
ORDER BY mention_id;

CREATE TABLE IF NOT EXISTS dead_letters (
  id String,
  source String,
  `partition` Nullable(Int64),
  `offset` Nullable(Int64),
  line Nullable(Int64),
  stage String,
  reason String,
  `key` Nullable(String),
  payload Nullable(String),
  ts Int64
) ENGINE = ReplacingMergeTree(ts)
ORDER BY id;
