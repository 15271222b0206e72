import { columns, sql, table } from '../../infra/store/sql-literal.ts';
import { tokens } from '../../presenters/tokens-table.ts';
import { latestSnapshots, RULE_FIELDS, snapshotHistory, type RuleField } from '../tables/quant.ts';
import { latestHistoryAsOf, settledSnapshotTime } from './as-of.ts';
import type { KeysetPosition, ReadStore, SortDir } from './cursor.ts';
import { compareText } from './text-order.ts';

/**
 * What the token list and the scanner read: every token's latest snapshot as of one time, held
 * in memory, so that sorting, filtering and paging cost no store statement. A view of 10× the
 * default token count is a few thousand rows; sorting it is well under a millisecond, and a
 * sorted order is kept for each field and direction asked.
 */

/** A token's snapshot as the token list and the scanner return it: its rule fields. */
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

/**
 * The order every listing of rule fields uses: by `field` in `dir` with nulls last, then by
 * token id ascending (in the stores' order), so the order is total and a keyset position
 * names one place in it.
 */
function compareAt(field: RuleField, dir: SortDir, value: number | null, id: string, other: RuleFieldRow): number {
  const theirs = other.values[field];
  if (value !== theirs) {
    if (value === null) return 1;
    if (theirs === null) return -1;
    return (value < theirs) === (dir === 'asc') ? -1 : 1;
  }
  return compareText(id, other.tokenId);
}

/** Each token's latest snapshot at or before `asOf`. */
export class SnapshotView {
  private readonly orders = new Map<string, readonly RuleFieldRow[]>();

  constructor(
    readonly asOf: number,
    readonly rows: readonly RuleFieldRow[],
  ) {}

  /** The rows in the listing order of `field` and `dir`, sorted on first use. */
  ordered(field: RuleField, dir: SortDir): readonly RuleFieldRow[] {
    const key = `${field} ${dir}`;
    let order = this.orders.get(key);
    if (order === undefined) {
      order = [...this.rows].sort((a, b) => compareAt(field, dir, a.values[field], a.tokenId, b));
      this.orders.set(key, order);
    }
    return order;
  }

  /** The index in `ordered(field, dir)` of the first row strictly after `position`. */
  indexAfter(field: RuleField, dir: SortDir, position: KeysetPosition): number {
    const order = this.ordered(field, dir);
    let [low, high] = [0, order.length];
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareAt(field, dir, position.value, position.id, order[mid]) < 0) high = mid;
      else low = mid + 1;
    }
    return low;
  }
}

/** Lower-case text a token list's `q` is matched against, by token id. */
export interface SearchText {
  /** The symbol of each token's latest snapshot. */
  symbols: ReadonlyMap<string, string>;
  /** The name in each token's metadata. */
  names: ReadonlyMap<string, string>;
}

/** Where views come from: the store itself, or the API's cache of it (api/services). */
export interface SnapshotReader {
  /** The time live listings are read as of (settledSnapshotTime); null before any snapshot. */
  settledTime(): Promise<number | null>;
  /** The view as of `asOf`; null when the history holds no snapshot that old. */
  viewAsOf(asOf: number): Promise<SnapshotView | null>;
  searchText(): Promise<SearchText>;
}

/** A store, read through on every call, or a reader of views. */
export type SnapshotSource = ReadStore | SnapshotReader;

export function readerOf(source: SnapshotSource): SnapshotReader {
  return 'viewAsOf' in source ? source : readThrough(source);
}

/** A reader that asks the store every time. */
export function readThrough(store: ReadStore): SnapshotReader {
  return {
    settledTime: () => settledSnapshotTime(store),
    viewAsOf: (asOf) => loadSnapshotView(store, asOf),
    searchText: () => loadSearchText(store),
  };
}

const VIEW_COLUMNS = ['token_id', 'ts', 'chain', 'narrative', 'divergence_state', ...RULE_FIELDS];

type RuleFieldResult = { token_id: string; ts: number; chain: string; narrative: string; divergence_state: string } & Record<
  RuleField,
  number | null
>;

export async function loadSnapshotView(store: ReadStore, asOf: number): Promise<SnapshotView | null> {
  const asOfRows = await latestHistoryAsOf(store, VIEW_COLUMNS, asOf);
  if (asOfRows === null) return null;
  const rows = await store.query<RuleFieldResult>(sql`SELECT ${columns(snapshotHistory, VIEW_COLUMNS)} FROM (${asOfRows}) AS as_of`);
  return new SnapshotView(
    asOf,
    rows.map((row) => ({
      tokenId: row.token_id,
      ts: row.ts,
      chain: row.chain,
      narrative: row.narrative,
      divergenceState: row.divergence_state,
      values: Object.fromEntries(RULE_FIELDS.map((f) => [f, row[f]])) as Record<RuleField, number | null>,
    })),
  );
}

export async function loadSearchText(store: ReadStore): Promise<SearchText> {
  const [symbols, names] = await Promise.all([
    store.query<{ token_id: string; symbol: string }>(sql`SELECT ${columns(latestSnapshots, ['token_id', 'symbol'])} FROM ${table(latestSnapshots)}`),
    store.query<{ token_id: string; name: string }>(sql`SELECT ${columns(tokens, ['token_id', 'name'])} FROM ${table(tokens)}`),
  ]);
  return {
    symbols: new Map(symbols.map((r) => [r.token_id, r.symbol.toLowerCase()])),
    names: new Map(names.map((r) => [r.token_id, r.name.toLowerCase()])),
  };
}
