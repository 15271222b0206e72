-- Author metrics, cohorts, convergence events, narrative buckets and outcomes (see
-- projections/tables/social.ts). Independent of 0003: either may be applied first.
CREATE TABLE IF NOT EXISTS author_metrics (
  author_id VARCHAR NOT NULL,
  handle VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  version BIGINT NOT NULL,
  model_version VARCHAR NOT NULL,
  calls_total BIGINT NOT NULL,
  calls_unpriced BIGINT NOT NULL,
  resolved_calls BIGINT NOT NULL,
  hits BIGINT NOT NULL,
  hit_rate DOUBLE,
  hit_rate_low DOUBLE,
  hit_rate_high DOUBLE,
  lead_time_samples BIGINT NOT NULL,
  median_lead_time_ms BIGINT,
  false_positive_rate DOUBLE,
  median_max_drawdown24h DOUBLE,
  median_return24h DOUBLE,
  consistency DOUBLE,
  active_weeks BIGINT NOT NULL,
  outcome_volatility DOUBLE,
  sector_strength VARCHAR NOT NULL,
  research_score DOUBLE,
  confidence VARCHAR NOT NULL,
  confidence_reason VARCHAR,
  PRIMARY KEY (author_id, ts)
);

CREATE TABLE IF NOT EXISTS cohorts (
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
  PRIMARY KEY (cohort_id)
);

CREATE TABLE IF NOT EXISTS cohort_events (
  event_id VARCHAR NOT NULL,
  cohort_id VARCHAR NOT NULL,
  cohort_kind VARCHAR NOT NULL,
  cohort_name VARCHAR NOT NULL,
  cohort_version BIGINT NOT NULL,
  owner_key_id VARCHAR,
  team_id VARCHAR,
  token_id VARCHAR NOT NULL,
  ts BIGINT NOT NULL,
  member_count BIGINT NOT NULL,
  cohort_size BIGINT NOT NULL,
  window_minutes BIGINT NOT NULL,
  members VARCHAR NOT NULL,
  score DOUBLE NOT NULL,
  PRIMARY KEY (event_id)
);

CREATE TABLE IF NOT EXISTS narrative_buckets (
  narrative VARCHAR NOT NULL,
  bucket_start BIGINT NOT NULL,
  ts BIGINT NOT NULL,
  theses BIGINT NOT NULL,
  mentions BIGINT NOT NULL,
  total_mentions BIGINT NOT NULL,
  unique_authors BIGINT NOT NULL,
  new_authors BIGINT NOT NULL,
  author_ids VARCHAR NOT NULL,
  author_growth DOUBLE,
  attention_share DOUBLE,
  attention_share24h DOUBLE,
  attention_share_change24h DOUBLE,
  top_tokens VARCHAR NOT NULL,
  top_contributors VARCHAR NOT NULL,
  PRIMARY KEY (narrative, bucket_start)
);

CREATE TABLE IF NOT EXISTS outcomes (
  outcome_id VARCHAR NOT NULL,
  subject_kind VARCHAR NOT NULL,
  subject_id VARCHAR NOT NULL,
  token_id VARCHAR NOT NULL,
  subject_ts BIGINT NOT NULL,
  horizon VARCHAR NOT NULL,
  entry_price DOUBLE NOT NULL,
  forward_return DOUBLE,
  max_drawdown DOUBLE,
  peak_return DOUBLE,
  time_to_peak_ms BIGINT,
  died BOOLEAN NOT NULL,
  last_price DOUBLE,
  resolved_at BIGINT NOT NULL,
  PRIMARY KEY (outcome_id)
);
