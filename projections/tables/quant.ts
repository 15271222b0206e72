import { defineTable, type RowOf } from '../../infra/store/table.ts';
import { FEATURE_NAMES, type FeatureName } from '../../processors/quant-engine/features/definitions.ts';
import { SCORE_NAMES, type ScoreName } from '../../schemas/records/primitives.ts';

/**
 * Tables of the quant read side: the latest snapshot of every token and the signal feed.
 * Rule fields (score names and feature names, spec 2.3) get a nullable float column each so
 * research filters them in SQL and the token list's and the scanner's views read them without
 * parsing the record; the whole record is kept as JSON
 * because the API returns it as produced, never recomputed.
 */

export type RuleField = ScoreName | FeatureName;

/** Every rule field, scores first: the allow-list of sort and scanner fields. */
export const RULE_FIELDS: readonly RuleField[] = Object.freeze([...SCORE_NAMES, ...FEATURE_NAMES]);

const RULE_FIELD_SET: ReadonlySet<string> = new Set(RULE_FIELDS);

export function isRuleField(name: string): name is RuleField {
  return RULE_FIELD_SET.has(name);
}

function nullableFloats<const N extends string>(names: readonly N[]): { readonly [K in N]: 'float64?' } {
  return Object.fromEntries(names.map((n) => [n, 'float64?'])) as { readonly [K in N]: 'float64?' };
}

/** quant.snapshots-latest: one row per token, the newest snapshot by event time. */
export const latestSnapshots = defineTable({
  name: 'latest_snapshots',
  columns: {
    token_id: 'string',
    ts: 'int64',
    symbol: 'string',
    chain: 'string',
    narrative: 'string',
    divergence_state: 'string',
    ...nullableFloats(SCORE_NAMES),
    ...nullableFloats(FEATURE_NAMES),
    snapshot: 'json',
  },
  key: ['token_id'],
  version: 'ts',
});
export type LatestSnapshotRow = RowOf<typeof latestSnapshots>;

/**
 * quant.snapshots: every snapshot's rule fields over time, for research over history
 * (backtests, event studies). The whole record is not kept here (a week of the default
 * world is about 800k snapshots); latest_snapshots keeps it for the current one.
 */
export const snapshotHistory = defineTable({
  name: 'snapshot_history',
  columns: {
    token_id: 'string',
    ts: 'int64',
    version: 'int64',
    snapshot_id: 'string',
    chain: 'string',
    narrative: 'string',
    divergence_state: 'string',
    ...nullableFloats(SCORE_NAMES),
    ...nullableFloats(FEATURE_NAMES),
  },
  key: ['token_id', 'ts'],
  // A snapshot never changes; a redelivered one is the same row.
  version: 'version',
});
export type SnapshotHistoryRow = RowOf<typeof snapshotHistory>;

/**
 * quant.snapshots: every snapshot's whole record, for the token snapshot as of a past time.
 * Apart from snapshot_history so research scans of rule fields never read this text.
 */
export const snapshotRecords = defineTable({
  name: 'snapshot_records',
  columns: {
    token_id: 'string',
    ts: 'int64',
    version: 'int64',
    snapshot: 'json',
  },
  key: ['token_id', 'ts'],
  // A snapshot never changes; a redelivered one is the same row.
  version: 'version',
});
export type SnapshotRecordRow = RowOf<typeof snapshotRecords>;

/**
 * quant.signals: one row per signal, the end record (version 2) replacing the fire record
 * (version 1). Market cap, liquidity and scores are those at fire time, for the feed's
 * minimum filters; the chain comes from the tokens table when a query filters on it.
 */
export const signals = defineTable({
  name: 'signals',
  columns: {
    signal_id: 'string',
    version: 'int64',
    type: 'string',
    rule_version: 'string',
    status: 'string',
    token_id: 'string',
    fired_at: 'int64',
    ended_at: 'int64?',
    strength: 'float64',
    market_cap_usd: 'float64?',
    liquidity_usd: 'float64?',
    ...nullableFloats(SCORE_NAMES),
    record: 'json',
  },
  key: ['signal_id'],
  version: 'version',
});
export type SignalRow = RowOf<typeof signals>;
