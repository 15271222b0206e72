-- Author metrics, cohorts, convergence events, narrative buckets and outcomes (see
-- projections/tables/social.ts). Independent of 0003: either may be applied first.
-- Monthly partitions only where the time is part of the key (ReplacingMergeTree replaces
-- within a partition); booleans are UInt8, times Int64 epoch milliseconds.
CREATE TABLE IF NOT EXISTS author_metrics (
  author_id String,
  handle String,
  ts Int64,
  version Int64,
  model_version String,
  calls_total Int64,
  calls_unpriced Int64,
  resolved_calls Int64,
  hits Int64,
  hit_rate Nullable(Float64),
  hit_rate_low Nullable(Float64),
  hit_rate_high Nullable(Float64),
  lead_time_samples Int64,
  median_lead_time_ms Nullable(Int64),
  false_positive_rate Nullable(Float64),
  median_max_drawdown24h Nullable(Float64),
  median_return24h Nullable(Float64),
  consistency Nullable(Float64),
  active_weeks Int64,
  outcome_volatility Nullable(Float64),
  sector_strength String,
  research_score Nullable(Float64),
  confidence String,
  confidence_reason Nullable(String)
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(toDateTime(intDiv(ts, 1000), 'UTC'))
ORDER BY (author_id, ts);

CREATE TABLE IF NOT EXISTS cohorts (
  cohort_id String,
  kind String,
  name String,
  owner_key_id Nullable(String),
  team_id Nullable(String),
  members String,
  version Int64,
  ts Int64,
  rule String,
  deleted UInt8,
  command_id Nullable(String)
) ENGINE = ReplacingMergeTree(version)
ORDER BY cohort_id;

CREATE TABLE IF NOT EXISTS cohort_events (
  event_id String,
  cohort_id String,
  cohort_kind String,
  cohort_name String,
  cohort_version Int64,
  owner_key_id Nullable(String),
  team_id Nullable(String),
  token_id String,
  ts Int64,
  member_count Int64,
  cohort_size Int64,
  window_minutes Int64,
  members String,
  score Float64
) ENGINE = ReplacingMergeTree(ts)
ORDER BY event_id;

CREATE TABLE IF NOT EXISTS narrative_buckets (
  narrative String,
  bucket_start Int64,
  ts Int64,
  theses Int64,
  mentions Int64,
  total_mentions Int64,
  unique_authors Int64,
  new_authors Int64,
  author_ids String,
  author_growth Nullable(Float64),
  attention_share Nullable(Float64),
  attention_share24h Nullable(Float64),
  attention_share_change24h Nullable(Float64),
  top_tokens String,
  top_contributors String
) ENGINE = ReplacingMergeTree(ts)
PARTITION BY toYYYYMM(toDateTime(intDiv(bucket_start, 1000), 'UTC'))
ORDER BY (narrative, bucket_start);

CREATE TABLE IF NOT EXISTS outcomes (
  outcome_id String,
  subject_kind String,
  subject_id String,
  token_id String,
  subject_ts Int64,
  horizon String,
  entry_price Float64,
  forward_return Nullable(Float64),
  max_drawdown Nullable(Float64),
  peak_return Nullable(Float64),
  time_to_peak_ms Nullable(Int64),
  died UInt8,
  last_price Nullable(Float64),
  resolved_at Int64
) ENGINE = ReplacingMergeTree(resolved_at)
ORDER BY outcome_id;
