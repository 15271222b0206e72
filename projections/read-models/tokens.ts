import { column, columns, int64, list, sql, table } from '../../infra/store/sql-literal.ts';
import type { Chain } from '../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { isRuleField, latestSnapshots, snapshotRecords, type RuleField } from '../tables/quant.ts';
import { checkDir, checkLimit, decodeCursor, encodeCursor, filtersHash, ReadModelError, type Page, type ReadStore, type SortDir } from './cursor.ts';
import { readerOf, type RuleFieldRow, type SnapshotSource } from './snapshot-views.ts';

export interface ListTokensQuery {
  sort: string;
  dir: SortDir;
  /** 1 to 100. */
  limit: number;
  cursor?: string;
  narrative?: string;
  chain?: Chain;
  /** Case-insensitive substring of the symbol or the name; at most 64 characters. */
  q?: string;
  /**
   * Epoch ms: each token as of its latest snapshot at or before it. Without it, the cursor's
   * time, or for a first page the settled time of the history (as-of.ts).
   */
  asOf?: number;
}

export const MAX_TOKENS_LIMIT = 100;
export const MAX_Q_LENGTH = 64;

/** The rule field `name`, refusing anything outside the allow-list. */
export function checkRuleField(name: string): RuleField {
  if (!isRuleField(name)) throw new ReadModelError('INVALID_FIELD', `unknown rule field ${JSON.stringify(name)}`);
  return name;
}

/**
 * Tokens with their scores (GET /v1/quant/tokens) as of one time: each token's latest
 * snapshot at or before it, from snapshot_history. Keyset-paginated on (sort value, token id)
 * with nulls last; the cursor carries the time of the first page, so every page reads the
 * same snapshots and a full pagination visits each token exactly once while new ones arrive.
 * The symbol `q` matches is the latest snapshot's, the name the token metadata's (neither is
 * kept over time; both rarely change).
 */
export async function listTokens(source: SnapshotSource, query: ListTokensQuery): Promise<Page<RuleFieldRow>> {
  const field = checkRuleField(query.sort);
  checkDir(query.dir);
  checkLimit(query.limit, MAX_TOKENS_LIMIT);
  if (query.q !== undefined && query.q.length > MAX_Q_LENGTH) {
    throw new ReadModelError('INVALID_ARGUMENT', `q must be at most ${MAX_Q_LENGTH} characters`);
  }
  const q = query.q?.toLowerCase();
  const ordering = `tokens:${field}:${query.dir}`;
  const filters = filtersHash({ narrative: query.narrative, chain: query.chain, q });
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ordering, filters, query.asOf);
  const reader = readerOf(source);
  const asOf = cursor !== undefined ? cursor.asOf : (query.asOf ?? (await reader.settledTime()));
  const empty = { rows: [], hasMore: false, nextCursor: null, asOf };
  if (asOf === null) return empty;
  const view = await reader.viewAsOf(asOf);
  if (view === null) return empty;

  const text = q === undefined || q === '' ? undefined : await reader.searchText();
  const passes = (row: RuleFieldRow): boolean =>
    (query.narrative === undefined || row.narrative === query.narrative) &&
    (query.chain === undefined || row.chain === query.chain) &&
    (text === undefined || text.symbols.get(row.tokenId)?.includes(q!) === true || text.names.get(row.tokenId)?.includes(q!) === true);
  const order = view.ordered(field, query.dir);
  const rows: RuleFieldRow[] = [];
  for (let i = cursor === undefined ? 0 : view.indexAfter(field, query.dir, cursor.position); i < order.length && rows.length <= query.limit; i++) {
    if (passes(order[i])) rows.push(order[i]);
  }
  const hasMore = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    rows: page,
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(ordering, filters, { value: last.values[field], id: last.tokenId }, asOf) : null,
    asOf,
  };
}

/** The latest snapshot record of a token as the quant engine produced it; null before its first. */
export async function latestSnapshot(store: ReadStore, tokenId: string): Promise<QuantSnapshot | null> {
  return (await latestSnapshotsOf(store, [tokenId])).get(tokenId) ?? null;
}

/** latestSnapshot of several tokens in one query, by token id; tokens without a snapshot are absent. */
export async function latestSnapshotsOf(store: ReadStore, tokenIds: readonly string[]): Promise<Map<string, QuantSnapshot>> {
  const unique = [...new Set(tokenIds)];
  if (unique.length === 0) return new Map();
  const rows = await store.query<{ token_id: string; snapshot: string }>(
    sql`SELECT ${columns(latestSnapshots, ['token_id', 'snapshot'])} FROM ${table(latestSnapshots)} WHERE ${column(latestSnapshots, 'token_id')} IN ${list(unique)}`,
  );
  // Written by the latest-snapshots projection from a validated record.
  return new Map(rows.map((row) => [row.token_id, JSON.parse(row.snapshot) as QuantSnapshot]));
}

/** A token's snapshot record as of `asOf` (epoch ms): its latest at or before it; null before its first. */
export async function snapshotAsOf(store: ReadStore, tokenId: string, asOf: number): Promise<QuantSnapshot | null> {
  const ts = column(snapshotRecords, 'ts');
  const rows = await store.query<{ snapshot: string }>(
    sql`SELECT ${columns(snapshotRecords, ['snapshot'])} FROM ${table(snapshotRecords)}
        WHERE ${column(snapshotRecords, 'token_id')} = ${tokenId} AND ${ts} <= ${int64(asOf)} ORDER BY ${ts} DESC LIMIT 1`,
  );
  // Written by the snapshot-history projection from a validated record.
  return rows[0] === undefined ? null : (JSON.parse(rows[0].snapshot) as QuantSnapshot);
}
