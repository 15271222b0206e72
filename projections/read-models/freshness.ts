import { column, columns, int64, sql, table } from '../../infra/store/sql-literal.ts';
import type { QuantFreshness } from '../../schemas/records/quant-scores.ts';
import { latestSnapshots } from '../tables/quant.ts';
import { allOf, type ReadStore } from './cursor.ts';

/**
 * How current the live dataset is (GET /v1/health): the newest snapshot, and the newest
 * social event and market data any token's latest snapshot has seen, as event times.
 */
export interface DatasetFreshness {
  /** Time of the newest snapshot of any token; null before the first. */
  latestSnapshotAt: number | null;
  /** Newest `freshness.sourceLastEventAt` over the tokens' latest snapshots. */
  sourceLastEventAt: number | null;
  /** Newest `freshness.marketLastAt` over the tokens' latest snapshots. */
  marketLastAt: number | null;
}

const FIRST_PAGE = 64;
const MAX_PAGE = 4096;

interface FreshnessRow {
  [name: string]: string | number;
  token_id: string;
  ts: number;
  snapshot: string;
}

/**
 * Reads the latest snapshots newest first and stops as soon as no older row can hold a later
 * time: a snapshot is built only from events at or before its own time, so both times of a
 * snapshot are at most its `ts`. Usually the first page decides; pages double so that a
 * dataset without market data (nothing to stop on) still takes few queries.
 */
export async function datasetFreshness(store: ReadStore): Promise<DatasetFreshness> {
  const result: DatasetFreshness = { latestSnapshotAt: null, sourceLastEventAt: null, marketLastAt: null };
  const ts = column(latestSnapshots, 'ts');
  const id = column(latestSnapshots, 'token_id');
  let after: { ts: number; id: string } | null = null;
  for (let size = FIRST_PAGE; ; size = Math.min(size * 2, MAX_PAGE)) {
    const where = allOf(after === null ? [] : [sql`(${ts} < ${int64(after.ts)} OR (${ts} = ${int64(after.ts)} AND ${id} > ${after.id}))`]);
    const rows = await store.query<FreshnessRow>(
      sql`SELECT ${columns(latestSnapshots, ['token_id', 'ts', 'snapshot'])} FROM ${table(latestSnapshots)} WHERE ${where}
          ORDER BY ${ts} DESC, ${id} ASC LIMIT ${int64(size)}`,
    );
    for (const row of rows) {
      // Written by the latest-snapshots projection from a validated record.
      const freshness = (JSON.parse(row.snapshot) as { freshness: QuantFreshness }).freshness;
      result.latestSnapshotAt ??= row.ts;
      result.sourceLastEventAt = later(result.sourceLastEventAt, freshness.sourceLastEventAt);
      result.marketLastAt = later(result.marketLastAt, freshness.marketLastAt);
    }
    const last = rows.at(-1);
    if (last === undefined || rows.length < size) return result;
    const { sourceLastEventAt: source, marketLastAt: market } = result;
    if (source !== null && market !== null && last.ts <= Math.min(source, market)) return result;
    after = { ts: last.ts, id: last.token_id };
  }
}

function later(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}
