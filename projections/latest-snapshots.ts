import { jsonText } from '../infra/store/json-text.ts';
import { FEATURE_NAMES } from '../processors/quant-engine/features/definitions.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import { SCORE_NAMES } from '../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../schemas/records/quant-scores.ts';
import { defineProjection } from './runtime/projection.ts';
import type { LatestSnapshotRow, SnapshotHistoryRow, SnapshotRecordRow } from './tables/quant.ts';

/** The rule fields of a snapshot by column name: scores, then features. */
function ruleFieldColumns(snapshot: QuantSnapshot): Record<string, number | null> {
  const row: Record<string, number | null> = {};
  for (const name of SCORE_NAMES) row[name] = snapshot.scores[name];
  // A feature missing from the map is unknown, which the column says with null.
  for (const name of FEATURE_NAMES) row[name] = snapshot.features[name] ?? null;
  return row;
}

/** A snapshot as its latest_snapshots row: rule fields spread into columns, the record kept whole. */
export function latestSnapshotRow(snapshot: QuantSnapshot): LatestSnapshotRow {
  return {
    token_id: snapshot.tokenId,
    ts: snapshot.ts,
    symbol: snapshot.symbol,
    chain: snapshot.chain,
    narrative: snapshot.narrative,
    divergence_state: snapshot.divergenceState,
    ...ruleFieldColumns(snapshot),
    snapshot: jsonText(snapshot),
  } as LatestSnapshotRow;
}

/** A snapshot as its snapshot_history row: its rule fields at its time. */
export function snapshotHistoryRow(snapshot: QuantSnapshot): SnapshotHistoryRow {
  return {
    token_id: snapshot.tokenId,
    ts: snapshot.ts,
    version: 1,
    snapshot_id: snapshot.snapshotId,
    chain: snapshot.chain,
    narrative: snapshot.narrative,
    divergence_state: snapshot.divergenceState,
    ...ruleFieldColumns(snapshot),
  } as SnapshotHistoryRow;
}

/** A snapshot as its snapshot_records row: the record whole, at its time. */
export function snapshotRecordRow(snapshot: QuantSnapshot): SnapshotRecordRow {
  return { token_id: snapshot.tokenId, ts: snapshot.ts, version: 1, snapshot: jsonText(snapshot) };
}

/** The newest quant snapshot of every token, by snapshot time. */
export const latestSnapshotsProjection = defineProjection({
  name: 'latest-snapshots',
  topics: [TOPICS.snapshotsLatest.name],
  tables: ['latest_snapshots'],
  toRows: (snapshot) => [{ table: 'latest_snapshots', row: latestSnapshotRow(snapshot) }],
  // A catch-up reads every snapshot of a token; only the newest of a batch is made into a row (and its JSON).
  newestOf: (snapshot) => ({ key: snapshot.tokenId, version: snapshot.ts }),
});

/**
 * Every quant snapshot, for research and reads as of a past time: its rule fields, and its
 * whole record in a table of its own. One projection writes both, so a snapshot's two rows
 * are stored by the same batch.
 */
export const snapshotHistoryProjection = defineProjection({
  name: 'snapshot-history',
  topics: [TOPICS.snapshots.name],
  tables: ['snapshot_history', 'snapshot_records'],
  toRows: (snapshot) => [
    { table: 'snapshot_history', row: snapshotHistoryRow(snapshot) },
    { table: 'snapshot_records', row: snapshotRecordRow(snapshot) },
  ],
});
