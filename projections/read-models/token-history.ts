import { column, columns, int64, list, sql, table } from '../../infra/store/sql-literal.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { snapshotRecords } from '../tables/quant.ts';
import { checkLimit, decodeCursor, encodeCursor, filtersHash, type CursorState, type ReadStore } from './cursor.ts';

/**
 * A token's snapshots over a time range at a fixed step (GET /v1/quant/token/{token}/history),
 * point in time: the point at grid time t is the token's latest stored snapshot record with
 * ts <= t, what the engine knew at t. Points start at the token's first snapshot, so every
 * point has one; pages move forward in time and the cursor carries the first page's `asOf`
 * and the next point's time.
 */

export const HISTORY_STEPS = { '5m': 5 * 60_000, '1h': 3_600_000, '1d': 86_400_000 } as const;
export type HistoryStep = keyof typeof HISTORY_STEPS;
export const HISTORY_STEP_NAMES = Object.keys(HISTORY_STEPS) as [HistoryStep, ...HistoryStep[]];
export const MAX_HISTORY_LIMIT = 1000;

export interface TokenHistoryQuery {
  tokenId: string;
  step: HistoryStep;
  /** Epoch ms, inclusive; the first point is the first grid time at or after it. */
  from: number;
  /** Epoch ms, inclusive; never later than the listing's asOf. */
  to: number;
  limit: number;
  /** The decoded cursor of the previous page (historyCursor), absent on a first page. */
  cursor?: CursorState;
  /** The time the listing is read as of, which the cursor of the next page carries. */
  asOf: number;
  /** The parameters as asked, so a cursor continues only its own query. */
  filters: Readonly<Record<string, unknown>>;
}

/** The first and the latest snapshot time of a token; null before its first. */
export interface SnapshotSpan {
  first: number;
  latest: number;
}

export interface HistoryPoint {
  /** The grid time. */
  ts: number;
  /** The snapshot in effect then. */
  snapshot: QuantSnapshot;
}

export interface HistoryPage {
  points: HistoryPoint[];
  nextCursor: string | null;
}

const ts = column(snapshotRecords, 'ts');
const tokenIs = (tokenId: string) => sql`${column(snapshotRecords, 'token_id')} = ${tokenId}`;

/** The first grid time at or after `ms`. */
const gridAtOrAfter = (ms: number, stepMs: number) => Math.ceil(ms / stepMs) * stepMs;

const orderingOf = (tokenId: string, step: HistoryStep) => `history:${tokenId}:${step}`;

export async function snapshotSpan(store: ReadStore, tokenId: string): Promise<SnapshotSpan | null> {
  const [row] = await store.query<{ n: number; first: number; latest: number }>(
    sql`SELECT count(*) AS n, min(${ts}) AS first, max(${ts}) AS latest FROM ${table(snapshotRecords)} WHERE ${tokenIs(tokenId)}`,
  );
  // ClickHouse gives 0, not NULL, as the min of no rows: the count tells them apart.
  return row === undefined || row.n === 0 ? null : { first: row.first, latest: row.latest };
}

/** The state of a history cursor, refused unless it came from the same query (and `asOf`, when one is asked). */
export function historyCursor(cursor: string, tokenId: string, step: HistoryStep, filters: Readonly<Record<string, unknown>>, asOf?: number): CursorState {
  return decodeCursor(cursor, orderingOf(tokenId, step), filtersHash(filters), asOf);
}

/** One page of points of the token, whose snapshots span `span`. */
export async function tokenHistory(store: ReadStore, span: SnapshotSpan, query: TokenHistoryQuery): Promise<HistoryPage> {
  checkLimit(query.limit, MAX_HISTORY_LIMIT);
  const stepMs = HISTORY_STEPS[query.step];
  const last = Math.floor(Math.min(query.to, query.asOf) / stepMs) * stepMs;
  const empty: HistoryPage = { points: [], nextCursor: null };
  const cursor = query.cursor;
  const start = cursor?.position.value ?? Math.max(gridAtOrAfter(query.from, stepMs), gridAtOrAfter(span.first, stepMs));
  if (start > last) return empty;
  const end = Math.min(last, start + (query.limit - 1) * stepMs);

  // The snapshot in effect at the page's first point, then every one up to its last point.
  const [before] = await store.query<{ ts: number }>(
    sql`SELECT ${ts} AS ts FROM ${table(snapshotRecords)} WHERE ${tokenIs(query.tokenId)} AND ${ts} <= ${int64(start)} ORDER BY ${ts} DESC LIMIT 1`,
  );
  const within = await store.query<{ ts: number }>(
    sql`SELECT ${ts} AS ts FROM ${table(snapshotRecords)} WHERE ${tokenIs(query.tokenId)} AND ${ts} > ${int64(start)} AND ${ts} <= ${int64(end)} ORDER BY ${ts}`,
  );
  const times = [...(before === undefined ? [] : [before.ts]), ...within.map((r) => r.ts)];
  const inEffect: { ts: number; snapshotTs: number }[] = [];
  let i = 0;
  for (let t = start; t <= end; t += stepMs) {
    while (i + 1 < times.length && times[i + 1] <= t) i++;
    inEffect.push({ ts: t, snapshotTs: times[i] });
  }

  const wanted = [...new Set(inEffect.map((p) => p.snapshotTs))];
  const rows = await store.query<{ ts: number; snapshot: string }>(
    sql`SELECT ${columns(snapshotRecords, ['ts', 'snapshot'])} FROM ${table(snapshotRecords)} WHERE ${tokenIs(query.tokenId)} AND ${ts} IN ${list(wanted)}`,
  );
  // Written by the snapshot-history projection from a validated record.
  const records = new Map(rows.map((r) => [r.ts, JSON.parse(r.snapshot) as QuantSnapshot]));
  const next = end + stepMs;
  return {
    points: inEffect.map((p) => ({ ts: p.ts, snapshot: records.get(p.snapshotTs)! })),
    nextCursor:
      next <= last ? encodeCursor(orderingOf(query.tokenId, query.step), filtersHash(query.filters), { value: next, id: query.tokenId }, query.asOf) : null,
  };
}
