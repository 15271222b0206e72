-- Mentions and dead letters (see projections/tables.ts). Quoted names are SQL keywords.
CREATE TABLE IF NOT EXISTS mentions (
  mention_id VARCHAR NOT NULL,
  post_id VARCHAR NOT NULL,
  author_id VARCHAR NOT NULL,
  author_handle VARCHAR NOT NULL,
  token_id VARCHAR NOT NULL,
  ref VARCHAR NOT NULL,
  ref_kind VARCHAR NOT NULL,
  post_kind VARCHAR NOT NULL,
  engagement BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  PRIMARY KEY (mention_id)
);

CREATE TABLE IF NOT EXISTS dead_letters (
  id VARCHAR NOT NULL,
  source VARCHAR NOT NULL,
  "partition" BIGINT,
  "offset" BIGINT,
  line BIGINT,
  stage VARCHAR NOT NULL,
  reason VARCHAR NOT NULL,
  "key" VARCHAR,
  payload VARCHAR,
  ts BIGINT NOT NULL,
  PRIMARY KEY (id)
);
