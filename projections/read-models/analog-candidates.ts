import { column, columns, sql, table } from '../../infra/store/sql-literal.ts';
import { allocateCandidateColumns, type AnalogCandidateColumns } from '../../processors/quant-engine/analogs/analogs.ts';
import { ANALOG_DIMS, writeRawVector } from '../../processors/quant-engine/analogs/vector.ts';
import { snapshotHistory } from '../tables/quant.ts';
import { outcomes } from '../tables/social.ts';
import type { ReadStore } from './cursor.ts';

/**
 * Analog candidates (model analog-v1.0) from the store: every snapshot of snapshot_history
 * whose 24h outcome has resolved, with its vector inputs, resolution time, forward return
 * and drawdown. These are the snapshots the quant engine's analogs module makes candidates
 * (analogs.ts onResolution): snapshot outcomes carry the snapshot id as their subject id.
 */

const OUTCOME_FIELDS = ['subject_id', 'resolved_at', 'forward_return', 'max_drawdown'] as const;
const VECTOR_FIELDS = [
  'snapshot_id',
  'token_id',
  'ts',
  'momentum',
  'crowding',
  'early_quality',
  'narrative_velocity',
  'price_change_1h',
  'volume_acceleration',
  'liquidity_usd',
] as const;

interface OutcomeResult {
  [name: string]: string | number | null;
  subject_id: string;
  resolved_at: number;
  forward_return: number | null;
  max_drawdown: number | null;
}

interface VectorResult {
  [name: string]: string | number | null;
  snapshot_id: string;
  token_id: string;
  ts: number;
  momentum: number | null;
  crowding: number | null;
  early_quality: number | null;
  narrative_velocity: number | null;
  price_change_1h: number | null;
  volume_acceleration: number | null;
  liquidity_usd: number | null;
}

/**
 * Every candidate, in resolution order (then snapshot id), so an index built from them is the
 * same whichever store answered. Two queries joined here: ClickHouse 18.16 restricts JOINs.
 */
export async function analogCandidates(store: ReadStore): Promise<AnalogCandidateColumns> {
  const resolved = sql`${column(outcomes, 'subject_kind')} = ${'snapshot'} AND ${column(outcomes, 'horizon')} = ${'24h'}`;
  const outcomeRows = await store.query<OutcomeResult>(
    sql`SELECT ${columns(outcomes, OUTCOME_FIELDS)} FROM ${table(outcomes)} WHERE ${resolved}
        ORDER BY ${column(outcomes, 'resolved_at')}, ${column(outcomes, 'subject_id')}`,
  );
  const vectorRows = await store.query<VectorResult>(
    sql`SELECT ${columns(snapshotHistory, VECTOR_FIELDS)} FROM ${table(snapshotHistory)}
        WHERE ${column(snapshotHistory, 'snapshot_id')} IN (SELECT ${column(outcomes, 'subject_id')} FROM ${table(outcomes)} WHERE ${resolved})`,
  );
  const vectors = new Map(vectorRows.map((row) => [row.snapshot_id, row]));
  // An outcome whose snapshot row is not projected yet joins a later load.
  const joined = outcomeRows.flatMap((o) => {
    const v = vectors.get(o.subject_id);
    return v === undefined ? [] : [{ o, v }];
  });
  const n = joined.length;
  const out = allocateCandidateColumns(n);
  joined.forEach(({ o, v }, i) => {
    out.snapshotId.push(v.snapshot_id);
    out.tokenId.push(v.token_id);
    out.ts[i] = v.ts;
    out.resolvedAt[i] = o.resolved_at;
    out.return24h[i] = o.forward_return ?? NaN;
    out.maxDrawdown24h[i] = o.max_drawdown ?? NaN;
    const inputs = {
      momentum: v.momentum,
      crowding: v.crowding,
      earlyQuality: v.early_quality,
      narrativeVelocity: v.narrative_velocity,
      priceChange1h: v.price_change_1h,
      volumeAcceleration: v.volume_acceleration,
      liquidityUsd: v.liquidity_usd,
    };
    writeRawVector(inputs, out.raw, i * ANALOG_DIMS);
  });
  return out;
}
