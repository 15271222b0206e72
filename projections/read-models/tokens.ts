import { byDialect, column, columns, int64, sql, table, type Sql, type SqlFragment } from '../../infra/store/sql-literal.ts';
import type { Chain } from '../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { tokens } from '../tables.ts';
import { isRuleField, latestSnapshots, RULE_FIELDS, snapshotHistory, snapshotRecords, type RuleField } from '../tables/quant.ts';
import { latestHistoryAsOf, settledSnapshotTime } from './as-of.ts';
import {
  allOf,
  checkDir,
  checkLimit,
  decodeCursor,
  encodeCursor,
  filtersHash,
  nullsLastAfter,
  nullsLastOrder,
  ReadModelError,
  type Page,
  type ReadStore,
  type SortDir,
} from './cursor.ts';

/**
 * A token's snapshot as the token list and the scanner return it: its rule fields, from
 * their columns. latest_snapshots and snapshot_history both have these columns, so the live
 * and the delayed scan give rows of this one shape; the full record is not read (a list page
 * would parse about 4 KB of JSON per row for values the columns already hold).
 */
export interface RuleFieldRow {
  tokenId: string;
  /** Snapshot time, epoch ms. */
  ts: number;
  chain: string;
  narrative: string;
  divergenceState: string;
  /** Every rule field (scores, then features), null where not available. */
  values: Record<RuleField, number | null>;
}

export const RULE_FIELD_ROW_COLUMNS = ['token_id', 'ts', 'chain', 'narrative', 'divergence_state', ...RULE_FIELDS] as const;

export type RuleFieldResult = { token_id: string; ts: number; chain: string; narrative: string; divergence_state: string } & Record<
  RuleField,
  number | null
>;

export function toRuleFieldRow(row: RuleFieldResult): RuleFieldRow {
  return {
    tokenId: row.token_id,
    ts: row.ts,
    chain: row.chain,
    narrative: row.narrative,
    divergenceState: row.divergence_state,
    values: Object.fromEntries(RULE_FIELDS.map((f) => [f, row[f]])) as Record<RuleField, number | null>,
  };
}

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

/**
 * The rule field `name` as a column, refusing anything outside the allow-list. Rule fields
 * have the same column names in latest_snapshots and snapshot_history.
 */
export function ruleFieldColumn(
  name: string,
  def: typeof latestSnapshots | typeof snapshotHistory = latestSnapshots,
): { field: RuleField; column: SqlFragment } {
  if (!isRuleField(name)) throw new ReadModelError('INVALID_FIELD', `unknown rule field ${JSON.stringify(name)}`);
  return { field: name, column: column(def, name) };
}

/** `haystack` contains `needle` (already lower-case), ignoring case. */
function containsLower(haystack: SqlFragment, needle: string): SqlFragment {
  return byDialect({
    clickhouse: sql`position(lowerUTF8(${haystack}), ${needle}) > 0`,
    duckdb: sql`strpos(lower(${haystack}), ${needle}) > 0`,
  });
}

/**
 * Tokens with their scores (GET /v1/quant/tokens) as of one time: each token's latest
 * snapshot at or before it, from snapshot_history. Keyset-paginated on (sort value, token id)
 * with NULLs last; the cursor carries the time of the first page, so every page reads the
 * same snapshots and a full pagination visits each token exactly once while new ones arrive.
 */
export async function listTokens(store: ReadStore, query: ListTokensQuery): Promise<Page<RuleFieldRow>> {
  const { field, column: sortColumn } = ruleFieldColumn(query.sort, snapshotHistory);
  checkDir(query.dir);
  checkLimit(query.limit, MAX_TOKENS_LIMIT);
  if (query.q !== undefined && query.q.length > MAX_Q_LENGTH) {
    throw new ReadModelError('INVALID_ARGUMENT', `q must be at most ${MAX_Q_LENGTH} characters`);
  }
  const q = query.q?.toLowerCase();
  const ordering = `tokens:${field}:${query.dir}`;
  const filters = filtersHash({ narrative: query.narrative, chain: query.chain, q });
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ordering, filters, query.asOf);
  const asOf = cursor !== undefined ? cursor.asOf : (query.asOf ?? (await settledSnapshotTime(store)));
  const empty = { rows: [], hasMore: false, nextCursor: null, asOf };
  if (asOf === null) return empty;
  const asOfRows = await latestHistoryAsOf(store, RULE_FIELD_ROW_COLUMNS, asOf);
  if (asOfRows === null) return empty;

  const id = column(snapshotHistory, 'token_id');
  const where: Sql[] = [];
  if (query.narrative !== undefined) where.push(sql`${column(snapshotHistory, 'narrative')} = ${query.narrative}`);
  if (query.chain !== undefined) where.push(sql`${column(snapshotHistory, 'chain')} = ${query.chain}`);
  if (q !== undefined && q !== '') {
    // The symbol as of the latest snapshot, the name from the token metadata (neither is kept
    // over time; both rarely change); subqueries need no join, which 18.16 restricts.
    const symbol = sql`SELECT ${column(latestSnapshots, 'token_id')} FROM ${table(latestSnapshots)} WHERE ${containsLower(column(latestSnapshots, 'symbol'), q)}`;
    const named = sql`SELECT ${column(tokens, 'token_id')} FROM ${table(tokens)} WHERE ${containsLower(column(tokens, 'name'), q)}`;
    where.push(sql`(${id} IN (${symbol}) OR ${id} IN (${named}))`);
  }
  if (cursor !== undefined) where.push(nullsLastAfter(sortColumn, id, query.dir, cursor.position));

  const rows = await store.query<RuleFieldResult>(
    sql`SELECT ${columns(snapshotHistory, RULE_FIELD_ROW_COLUMNS)} FROM (${asOfRows}) AS as_of WHERE ${allOf(where)}
        ORDER BY ${nullsLastOrder(sortColumn, id, query.dir)} LIMIT ${int64(query.limit + 1)}`,
  );
  const hasMore = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const lastValue = last?.[field];
  return {
    rows: page.map(toRuleFieldRow),
    hasMore,
    nextCursor:
      hasMore && last
        ? encodeCursor(ordering, filters, { value: typeof lastValue === 'number' ? lastValue : null, id: last.token_id }, asOf)
        : null,
    asOf,
  };
}

/** The latest snapshot record of a token as the quant engine produced it; null before its first. */
export async function latestSnapshot(store: ReadStore, tokenId: string): Promise<QuantSnapshot | null> {
  const rows = await store.query<{ snapshot: string }>(
    sql`SELECT ${columns(latestSnapshots, ['snapshot'])} FROM ${table(latestSnapshots)} WHERE ${column(latestSnapshots, 'token_id')} = ${tokenId}`,
  );
  // Written by the latest-snapshots projection from a validated record.
  return rows[0] === undefined ? null : (JSON.parse(rows[0].snapshot) as QuantSnapshot);
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
