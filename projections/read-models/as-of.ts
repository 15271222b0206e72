import { partitionForKey } from '../../infra/log/partitioner.ts';
import { byDialect, column, columns, int64, list, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import { MAX_SNAPSHOT_GAP_MS, SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { tokens } from '../../presenters/tokens-table.ts';
import { snapshotHistory } from '../tables/quant.ts';
import type { ReadStore } from './cursor.ts';

/**
 * Reads as of a past time (`as_of`) over snapshot_history, and the time live listings are
 * read as of.
 *
 * Each token's latest snapshot at or before a time T lies within MAX_SNAPSHOT_GAP_MS (plus
 * one grid step) of the newest snapshot stored at or before T: the engine gives every token a
 * snapshot at least that often, for every grid step it passes. So a read as of T looks at
 * that last stretch of history only, not at the whole week.
 */

/** The first and the newest snapshot time in the history; null when it holds none. */
export interface HistoryRange {
  first: number | null;
  latest: number | null;
}

export async function snapshotHistoryRange(store: ReadStore): Promise<HistoryRange> {
  const ts = column(snapshotHistory, 'ts');
  const [row] = await store.query<{ n: number; first: number | null; latest: number | null }>(
    sql`SELECT count(*) AS n, min(${ts}) AS first, max(${ts}) AS latest FROM ${table(snapshotHistory)}`,
  );
  // ClickHouse gives 0, not NULL, as the min of no rows: the count tells them apart.
  if (row === undefined || row.n === 0) return { first: null, latest: null };
  return { first: row.first, latest: row.latest };
}

/** The newest snapshot time at or before `asOf`; null when there is none. */
async function newestAtOrBefore(store: ReadStore, asOf: number): Promise<number | null> {
  const ts = column(snapshotHistory, 'ts');
  const [row] = await store.query<{ n: number; latest: number | null }>(
    sql`SELECT count(*) AS n, max(${ts}) AS latest FROM ${table(snapshotHistory)} WHERE ${ts} <= ${int64(asOf)}`,
  );
  return row === undefined || row.n === 0 ? null : row.latest;
}

/**
 * A subquery of each token's latest snapshot_history row at or before `asOf`, with `names`
 * as its columns; null when no snapshot is that old. Rows are immutable once written, so
 * the answer for a time only changes while snapshots at or before it are still arriving.
 */
export async function latestHistoryAsOf(store: ReadStore, names: readonly string[], asOf: number): Promise<Sql | null> {
  const newest = await newestAtOrBefore(store, asOf);
  if (newest === null) return null;
  const from = newest - MAX_SNAPSHOT_GAP_MS - SNAPSHOT_GRID_MS;
  const tokenId = column(snapshotHistory, 'token_id');
  const ts = column(snapshotHistory, 'ts');
  // Latest row per token without window functions in ClickHouse 18.16: LIMIT 1 BY.
  return sql`SELECT ${columns(snapshotHistory, names)} FROM ${table(snapshotHistory)}
    WHERE ${ts} <= ${int64(asOf)} AND ${ts} >= ${int64(from)}
    ${byDialect({ duckdb: sql`QUALIFY row_number() OVER (PARTITION BY ${tokenId} ORDER BY ${ts} DESC) = 1`, clickhouse: sql`` })}
    ${byDialect({ duckdb: sql``, clickhouse: sql`ORDER BY ${tokenId}, ${ts} DESC LIMIT 1 BY ${tokenId}` })}`;
}

/**
 * The time live listings (tokens, scan) are read as of: a time up to which the history holds
 * every snapshot, so reading as of it later gives the same answer. The scores stage writes
 * quant.snapshots in event-time order within each partition, and the projection stores each
 * partition in offset order; so once a snapshot of time M is stored from a partition, every
 * snapshot of that partition before M is too (those of M itself may still be on their way:
 * a batch can end within a step). Snapshots sit on the grid, so the step before M is
 * complete; the history is complete up to the least of those over the partitions.
 *
 * Every partition holding a token counts, those of the token metadata too: a partition the
 * projection has not reached yet bounds the time by its newest stored snapshot, or leaves
 * nothing settled (null) while it has none; so does an empty history.
 */
export async function settledSnapshotTime(store: ReadStore): Promise<number | null> {
  const { latest } = await snapshotHistoryRange(store);
  if (latest === null) return null;
  const tokenId = column(snapshotHistory, 'token_id');
  const ts = column(snapshotHistory, 'ts');
  const partitions = TOPICS.snapshots.partitions;
  const partitionOf = (id: string) => partitionForKey(id, partitions);
  const recent = await store.query<{ token_id: string; latest: number }>(
    sql`SELECT ${tokenId} AS token_id, max(${ts}) AS latest FROM ${table(snapshotHistory)}
        WHERE ${ts} >= ${int64(latest - MAX_SNAPSHOT_GAP_MS - SNAPSHOT_GRID_MS)} GROUP BY ${tokenId}`,
  );
  const newestPerPartition = new Map<number, number>();
  for (const row of recent) {
    const p = partitionOf(row.token_id);
    newestPerPartition.set(p, Math.max(newestPerPartition.get(p) ?? -Infinity, row.latest));
  }
  // Partitions of listed tokens with nothing in the last stretch: their newest stored snapshot, if any.
  const listed = await store.query<{ token_id: string }>(sql`SELECT ${column(tokens, 'token_id')} FROM ${table(tokens)}`);
  const behind = new Map<number, string[]>();
  for (const { token_id: id } of listed) {
    const p = partitionOf(id);
    if (!newestPerPartition.has(p)) behind.set(p, [...(behind.get(p) ?? []), id]);
  }
  for (const [p, ids] of behind) {
    const [row] = await store.query<{ n: number; latest: number | null }>(
      sql`SELECT count(*) AS n, max(${ts}) AS latest FROM ${table(snapshotHistory)} WHERE ${tokenId} IN ${list(ids)}`,
    );
    if (row === undefined || row.n === 0 || row.latest === null) return null;
    newestPerPartition.set(p, row.latest);
  }
  return Math.min(...newestPerPartition.values()) - SNAPSHOT_GRID_MS;
}
