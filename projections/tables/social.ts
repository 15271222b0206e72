import { defineTable, type RowOf } from '../../infra/store/table.ts';

/**
 * Tables of the social analytics and outcomes topics (schemas/records/quant-social.ts,
 * quant-market.ts). Column names are the records' field names through snakeKeys, so digits
 * stay attached: medianReturn24h is median_return24h. Arrays and nested objects are json.
 */

/** Every version of an author's metrics, keyed by time so point-in-time reads can pick one. */
export const authorMetrics = defineTable({
  name: 'author_metrics',
  columns: {
    author_id: 'string',
    handle: 'string',
    ts: 'int64',
    version: 'int64',
    model_version: 'string',
    calls_total: 'int64',
    calls_unpriced: 'int64',
    resolved_calls: 'int64',
    hits: 'int64',
    hit_rate: 'float64?',
    hit_rate_low: 'float64?',
    hit_rate_high: 'float64?',
    lead_time_samples: 'int64',
    median_lead_time_ms: 'int64?',
    false_positive_rate: 'float64?',
    median_max_drawdown24h: 'float64?',
    median_return24h: 'float64?',
    consistency: 'float64?',
    active_weeks: 'int64',
    outcome_volatility: 'float64?',
    sector_strength: 'json',
    research_score: 'float64?',
    confidence: 'string',
    confidence_reason: 'string?',
  },
  key: ['author_id', 'ts'],
  version: 'version',
});
export type AuthorMetricsRow = RowOf<typeof authorMetrics>;

const COHORT_COLUMNS = {
  cohort_id: 'string',
  kind: 'string',
  name: 'string',
  owner_key_id: 'string?',
  team_id: 'string?',
  members: 'json',
  version: 'int64',
  ts: 'int64',
  rule: 'string',
  deleted: 'bool',
  command_id: 'string?',
} as const;

/** The latest membership version of each cohort; deleted ones stay as tombstone rows. */
export const cohorts = defineTable({
  name: 'cohorts',
  columns: COHORT_COLUMNS,
  key: ['cohort_id'],
  version: 'version',
});
export type CohortRow = RowOf<typeof cohorts>;

/** Every version of every cohort, the same columns as `cohorts`: cohorts as of a past time read it. */
export const cohortVersions = defineTable({
  name: 'cohort_versions',
  columns: COHORT_COLUMNS,
  key: ['cohort_id', 'version'],
  // A version never changes; a redelivered one is the same row.
  version: 'ts',
});

/** Convergence events: several members of a cohort mentioning one token within a window. */
export const cohortEvents = defineTable({
  name: 'cohort_events',
  columns: {
    event_id: 'string',
    cohort_id: 'string',
    cohort_kind: 'string',
    cohort_name: 'string',
    cohort_version: 'int64',
    owner_key_id: 'string?',
    team_id: 'string?',
    token_id: 'string',
    ts: 'int64',
    member_count: 'int64',
    cohort_size: 'int64',
    window_minutes: 'int64',
    members: 'json',
    score: 'float64',
  },
  key: ['event_id'],
  version: 'ts',
});
export type CohortEventRow = RowOf<typeof cohortEvents>;

/** Hourly narrative buckets with their raw counts, so coarser buckets can be built exactly. */
export const narrativeBuckets = defineTable({
  name: 'narrative_buckets',
  columns: {
    narrative: 'string',
    bucket_start: 'int64',
    ts: 'int64',
    theses: 'int64',
    mentions: 'int64',
    total_mentions: 'int64',
    unique_authors: 'int64',
    new_authors: 'int64',
    author_ids: 'json',
    author_growth: 'float64?',
    attention_share: 'float64?',
    attention_share24h: 'float64?',
    attention_share_change24h: 'float64?',
    top_tokens: 'json',
    top_contributors: 'json',
  },
  key: ['narrative', 'bucket_start'],
  version: 'ts',
});
export type NarrativeBucketRow = RowOf<typeof narrativeBuckets>;

/** Forward outcomes of snapshots and calls per horizon; a later resolution replaces an earlier one. */
export const outcomes = defineTable({
  name: 'outcomes',
  columns: {
    outcome_id: 'string',
    subject_kind: 'string',
    subject_id: 'string',
    token_id: 'string',
    subject_ts: 'int64',
    horizon: 'string',
    entry_price: 'float64',
    forward_return: 'float64?',
    max_drawdown: 'float64?',
    peak_return: 'float64?',
    time_to_peak_ms: 'int64?',
    died: 'bool',
    last_price: 'float64?',
    resolved_at: 'int64',
  },
  key: ['outcome_id'],
  version: 'resolved_at',
  // Five horizons of every snapshot and call: the largest table, read only by scans.
  keyIndex: false,
});
export type OutcomeRow = RowOf<typeof outcomes>;
