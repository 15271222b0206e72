import { defineTable, defineTables, type RowOf } from '../infra/store/table.ts';
import { apiKeys, teams } from './tables/keys.ts';
import { tokens } from '../presenters/tokens-table.ts';
import { webhookDeliveries, webhooks } from './tables/webhooks.ts';
import { backtestEvents, backtestRequests, backtestRuns, eventStudies } from './tables/research.ts';
import { latestSnapshots, signals, snapshotHistory, snapshotRecords } from './tables/quant.ts';
import { processorCheckpoints } from '../processors/runtime/checkpoints/store.ts';
import { authorMetrics, cohortEvents, cohorts, cohortVersions, narrativeBuckets, outcomes } from './tables/social.ts';

/**
 * Every projection table, declared once. Both stores' migrations create these tables and
 * migrate() checks the result against these definitions, so adding a table is: a
 * definition here, listed in PROJECTED, and one new migration file per store under
 * projections/migrations/{duckdb,clickhouse}/ (NNNN_what.sql, next free number).
 */

/** Point-in-time feature snapshots of a token; `features` holds the full feature map as JSON. */
export const snapshots = defineTable({
  name: 'snapshots',
  columns: {
    token_id: 'string',
    ts: 'int64',
    version: 'int64',
    price_usd: 'float64?',
    momentum: 'float64?',
    crowding: 'float64?',
    has_market_data: 'bool',
    features: 'json',
  },
  key: ['token_id', 'ts'],
  version: 'version',
});
export type SnapshotRow = RowOf<typeof snapshots>;

/** Posts exploded into resolved token mentions (quant.mentions, schemas/records.ts Mention). */
export const mentions = defineTable({
  name: 'mentions',
  columns: {
    mention_id: 'string',
    post_id: 'string',
    author_id: 'string',
    author_handle: 'string',
    token_id: 'string',
    ref: 'string',
    ref_kind: 'string',
    post_kind: 'string',
    engagement: 'int64',
    ts: 'int64',
  },
  key: ['mention_id'],
  version: 'ts',
});
export type MentionRow = RowOf<typeof mentions>;

/**
 * Records refused by ingest, a processor or a projection (ops.dead-letters, DeadLetter).
 * `id` joins where the record came from and who refused it into one key, so one rejected
 * record shows once per stage that refused it. `payload` is the raw value in base64.
 */
export const deadLetters = defineTable({
  name: 'dead_letters',
  columns: {
    id: 'string',
    source: 'string',
    partition: 'int64?',
    offset: 'int64?',
    line: 'int64?',
    stage: 'string',
    reason: 'string',
    key: 'string?',
    payload: 'string?',
    ts: 'int64',
  },
  key: ['id'],
  version: 'ts',
});
export type DeadLetterRow = RowOf<typeof deadLetters>;

const PROJECTED = [
  tokens,
  snapshots,
  mentions,
  deadLetters,
  latestSnapshots,
  snapshotHistory,
  snapshotRecords,
  signals,
  authorMetrics,
  cohorts,
  cohortVersions,
  cohortEvents,
  narrativeBuckets,
  outcomes,
  apiKeys,
  teams,
  webhooks,
  webhookDeliveries,
  backtestRequests,
  backtestRuns,
  backtestEvents,
  eventStudies,
] as const;

/** Every table a projection writes: what a replay rebuilds, and what two stores built from one log share. */
export const PROJECTION_TABLES = defineTables(...PROJECTED);

/** Every table of the store: the projections' and the processors' shared checkpoints (TQA_CHECKPOINTS=store). */
export const STORE_TABLES = defineTables(...PROJECTED, processorCheckpoints);
/** The registry type of an opened store; PROJECTION_TABLES, a part of it, fits it too. */
export type ProjectionTables = typeof STORE_TABLES;
