import { FEATURE_NAMES } from '../processors/quant-engine/features/definitions.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import { SCORE_NAMES } from '../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../schemas/records/quant-scores.ts';
import { defineProjection } from './runtime/projection.ts';
import type { LatestSnapshotRow } from './tables/quant.ts';

/** A snapshot as its latest_snapshots row: rule fields spread into columns, the record kept whole. */
export function latestSnapshotRow(snapshot: QuantSnapshot): LatestSnapshotRow {
  const row: Record<string, string | number | null> = {
    token_id: snapshot.tokenId,
    ts: snapshot.ts,
    symbol: snapshot.symbol,
    chain: snapshot.chain,
    narrative: snapshot.narrative,
    divergence_state: snapshot.divergenceState,
  };
  for (const name of SCORE_NAMES) row[name] = snapshot.scores[name];
  // A feature missing from the map is unknown, which the column says with null.
  for (const name of FEATURE_NAMES) row[name] = snapshot.features[name] ?? null;
  row.snapshot = JSON.stringify(snapshot);
  return row as LatestSnapshotRow;
}

/** The newest quant snapshot of every token, by snapshot time. */
export const latestSnapshotsProjection = defineProjection({
  name: 'latest-snapshots',
  topics: [TOPICS.snapshotsLatest.name],
  tables: ['latest_snapshots'],
  toRows: (snapshot) => [{ table: 'latest_snapshots', row: latestSnapshotRow(snapshot) }],
});
