import { columns } from '../../infra/store/sql-literal.ts';
import { SCORE_NAMES, type ScoreName } from '../../schemas/records/primitives.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { signals, type SignalRow } from '../tables/quant.ts';
import type { Page } from './cursor.ts';
import { feedPage, type FeedRequest } from './signals.ts';
import { compareText } from './text-order.ts';

/**
 * The signal feed over rows held in memory (the API's, api/services/signal-feed.ts): the
 * filters, statuses as of a time, order and keyset of signalFeed's SQL (signals.ts), one for
 * one, with its checks and pages shared. The rows are the columns those filters read, as the
 * store returns them, so every comparison here compares the values SQL compares.
 */

export type SignalFeedRow = Pick<
  SignalRow,
  'signal_id' | 'type' | 'token_id' | 'fired_at' | 'ended_at' | 'market_cap_usd' | 'liquidity_usd' | 'record' | ScoreName
>;

export const SIGNAL_FEED_ROW_COLUMNS = columns(signals, [
  'signal_id',
  'type',
  'token_id',
  'fired_at',
  'ended_at',
  'market_cap_usd',
  'liquidity_usd',
  ...SCORE_NAMES,
  'record',
]);

/** The feed's order (NEWEST_FIRST): by fire time, newest first, then by id descending. */
export function newestFirst(a: SignalFeedRow, b: SignalFeedRow): number {
  return b.fired_at - a.fired_at || compareText(b.signal_id, a.signal_id);
}

/** After `position` in the feed's order: the SQL keyset condition. */
function isAfter(row: SignalFeedRow, position: { value: number; id: string }): boolean {
  return row.fired_at < position.value || (row.fired_at === position.value && compareText(row.signal_id, position.id) < 0);
}

/** The index of the first row after `position` in `rows`, which are in the feed's order. */
function firstAfter(rows: readonly SignalFeedRow[], position: { value: number; id: string }): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (isAfter(rows[middle], position)) high = middle;
    else low = middle + 1;
  }
  return low;
}

/** A minimum as SQL tests it: an unknown (NULL) value never passes. */
const atLeast = (value: number | null, minimum: number): boolean => value !== null && value >= minimum;

/** The status filter at `asOf`: firedBy, activeAt and endedBy of signals.ts. */
function hasStatusAt(row: SignalFeedRow, status: FeedRequest['query']['status'], asOf: number): boolean {
  if (status === 'ended') return row.ended_at !== null && row.ended_at <= asOf;
  if (row.fired_at > asOf) return false;
  return status === 'all' || row.ended_at === null || row.ended_at > asOf;
}

/** signalFeed's WHERE without the keyset; `onChains` holds the ids of the tokens on the query's chains. */
function passes(row: SignalFeedRow, { query }: FeedRequest, asOf: number, onChains: ReadonlySet<string> | undefined): boolean {
  if (query.minScore !== undefined && !atLeast(row[query.minScore.score], query.minScore.value)) return false;
  if (query.types !== undefined && query.types.length > 0 && !query.types.includes(row.type)) return false;
  if (query.chains !== undefined && query.chains.length > 0 && onChains?.has(row.token_id) !== true) return false;
  if (query.marketCap !== undefined && !atLeast(row.market_cap_usd, query.marketCap)) return false;
  if (query.liquidity !== undefined && !atLeast(row.liquidity_usd, query.liquidity)) return false;
  if (query.createdAfter !== undefined && row.fired_at <= query.createdAfter) return false;
  if (query.tokenId !== undefined && row.token_id !== query.tokenId) return false;
  return hasStatusAt(row, query.status, asOf);
}

/**
 * The page signalFeed gives for `request` as of `asOf`, from every row of the feed in its
 * order (newestFirst). `onChains`: the ids of the tokens on the query's chains, when it names any.
 */
export function feedFromRows(
  rows: readonly SignalFeedRow[],
  request: FeedRequest,
  asOf: number | null,
  onChains?: ReadonlySet<string>,
  signalOf?: (row: SignalFeedRow) => Signal,
): Page<Signal> {
  if (asOf === null) return feedPage([], request, asOf);
  const matches: SignalFeedRow[] = [];
  const start = request.cursor === undefined ? 0 : firstAfter(rows, request.cursor.position);
  // One more than the page, to tell whether more follow.
  for (let i = start; i < rows.length && matches.length <= request.query.limit; i++) {
    if (passes(rows[i], request, asOf, onChains)) matches.push(rows[i]);
  }
  return feedPage(matches, request, asOf, signalOf);
}

/** The newest event (fire or end) of `rows`, as latestSignalEvent gives it of the stored feed; null when there is none. */
export function latestEventOf(rows: readonly SignalFeedRow[]): number | null {
  let latest: number | null = null;
  for (const row of rows) latest = Math.max(latest ?? row.fired_at, row.fired_at, row.ended_at ?? row.fired_at);
  return latest;
}
