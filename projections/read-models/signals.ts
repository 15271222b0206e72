import { column, columns, float64, int64, list, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import { assertInt64 } from '../../infra/store/table.ts';
import { SCORE_NAMES, type Chain, type ScoreName } from '../../schemas/records/primitives.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { tokens } from '../../presenters/tokens-table.ts';
import { signals } from '../tables/quant.ts';
import { allOf, checkLimit, decodeCursor, encodeCursor, filtersHash, known, ReadModelError, type Page, type ReadStore } from './cursor.ts';

export type SignalStatusFilter = 'active' | 'ended' | 'all';

export interface SignalFeedQuery {
  /** Minimum score at fire time. */
  minScore?: { score: ScoreName; value: number };
  types?: readonly string[];
  chains?: readonly Chain[];
  /** Minimum market cap at fire time, USD. */
  marketCap?: number;
  /** Minimum liquidity at fire time, USD. */
  liquidity?: number;
  /** Epoch ms; signals fired strictly after it. */
  createdAfter?: number;
  status: SignalStatusFilter;
  tokenId?: string;
  /** 1 to 100. */
  limit: number;
  cursor?: string;
  /**
   * Epoch ms: the feed as it stood then (signals fired by then, with their status then).
   * Without it, the cursor's time, or for a first page the newest event of the feed.
   */
  asOf?: number;
}

export interface SignalDetail {
  signal: Signal;
  /** Earlier firings of the same rule version on the same token, newest first, at most 20. */
  priorFirings: Signal[];
  /** The time the answer is for: the `asOf` asked, or the newest event (fire or end) of the signals read. */
  asOf: number;
}

export const MAX_SIGNALS_LIMIT = 100;
export const MAX_PRIOR_FIRINGS = 20;
const STATUSES: ReadonlySet<string> = new Set(['active', 'ended', 'all']);
const SCORES: ReadonlySet<string> = new Set(SCORE_NAMES);

/** What the feed reads of a signal: its keyset position and its record. */
export interface SignalResult {
  [name: string]: string | number | null;
  signal_id: string;
  fired_at: number;
  record: string;
}

const SELECT = columns(signals, ['signal_id', 'fired_at', 'record']);
const firedAt = column(signals, 'fired_at');
const signalId = column(signals, 'signal_id');
/** Newest first; the id breaks ties so the order is total, as keyset paging needs. */
const NEWEST_FIRST = sql`${firedAt} DESC, ${signalId} DESC`;

// Written by the signals projection from a validated record.
export const toSignal = (row: SignalResult): Signal => JSON.parse(row.record) as Signal;

/**
 * A signal as it stood at `asOf`: one that ended later was still active then, and its record
 * then was its fire record (version 1, written at its fire time). Everything else of a
 * signal is fixed when it fires.
 */
export function signalAsOf(signal: Signal, asOf: number): Signal {
  if (signal.endedAt === null || signal.endedAt <= asOf) return signal;
  return { ...signal, status: 'active', endedAt: null, endReason: null, version: 1, ts: signal.firedAt };
}

/** The newest time a signal changed: its end, or its firing while active. */
const lastEventOf = (signal: Signal): number => signal.endedAt ?? signal.firedAt;

const endedAt = column(signals, 'ended_at');

/** Fired at or before `asOf`. */
const firedBy = (asOf: number): Sql => sql`${firedAt} <= ${int64(asOf)}`;
/** Active at `asOf`: fired by then and not ended by then. */
const activeAt = (asOf: number): Sql => sql`${firedBy(asOf)} AND (${endedAt} IS NULL OR ${known(sql`${endedAt} > ${int64(asOf)}`)})`;
/** Ended at or before `asOf`. */
const endedBy = (asOf: number): Sql => known(sql`${endedAt} <= ${int64(asOf)}`);

/** The newest event (fire or end) of the stored feed; null when it is empty. */
export async function latestSignalEvent(store: ReadStore): Promise<number | null> {
  const [row] = await store.query<{ n: number; fired: number | null; ended: number | null }>(
    sql`SELECT count(*) AS n, max(${firedAt}) AS fired, max(${endedAt}) AS ended FROM ${table(signals)}`,
  );
  if (row === undefined || row.n === 0 || row.fired === null) return null;
  // ClickHouse 18.16 may give 0 for the max of only NULLs; an end never precedes a firing anyway.
  return Math.max(row.fired, row.ended ?? row.fired);
}

/** Refuses a minimum that is not a finite number. */
function checkMinimum(value: number, what: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ReadModelError('INVALID_ARGUMENT', `${what} must be a finite number`);
}

/** At least `value`; a signal whose value was unknown (NULL) never passes. */
const atLeast = (name: 'market_cap_usd' | 'liquidity_usd' | ScoreName, value: number): Sql => known(sql`${column(signals, name)} >= ${float64(value)}`);

const FEED_ORDERING = 'signals:fired_at:desc';

/** A feed query that passed the feed's checks: its filters' hash, and what its cursor holds. */
export interface FeedRequest {
  query: SignalFeedQuery;
  filters: string;
  /** Where the previous page stopped (a fire time and an id) and the time the listing is read as of. */
  cursor: { position: { value: number; id: string }; asOf: number | null } | undefined;
}

/**
 * Refuses what the feed refuses (ReadModelError), before anything is read; the one check of
 * both feeds, the store's (signalFeed) and the API's in memory, so they refuse alike.
 */
export function checkFeedQuery(query: SignalFeedQuery): FeedRequest {
  checkLimit(query.limit, MAX_SIGNALS_LIMIT);
  if (!STATUSES.has(query.status)) throw new ReadModelError('INVALID_ARGUMENT', 'status must be active, ended or all');
  if (query.minScore !== undefined) {
    if (!SCORES.has(query.minScore.score)) {
      throw new ReadModelError('INVALID_FIELD', `unknown score ${JSON.stringify(query.minScore.score)}`);
    }
    checkMinimum(query.minScore.value, 'min_score');
  }
  if (query.marketCap !== undefined) checkMinimum(query.marketCap, 'market_cap');
  if (query.liquidity !== undefined) checkMinimum(query.liquidity, 'liquidity');
  // Refused as its SQL literal refuses it (a time beyond 2^53 ms), so the feed in memory fails as the store's does.
  if (query.createdAfter !== undefined) assertInt64(query.createdAfter, 'int64 literal');
  const filters = filtersHash({
    minScore: query.minScore,
    types: query.types,
    chains: query.chains,
    marketCap: query.marketCap,
    liquidity: query.liquidity,
    createdAfter: query.createdAfter,
    status: query.status,
    tokenId: query.tokenId,
  });
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor, FEED_ORDERING, filters, query.asOf);
  if (cursor === undefined) return { query, filters, cursor };
  const { value, id } = cursor.position;
  if (value === null || !Number.isSafeInteger(value)) throw new ReadModelError('INVALID_CURSOR', 'invalid cursor');
  return { query, filters, cursor: { position: { value, id }, asOf: cursor.asOf } };
}

/** The time a feed request is read as of: its cursor's, else the `asOf` asked, else the newest event of the feed. */
export async function feedTime(request: FeedRequest, newestEvent: () => Promise<number | null>): Promise<number | null> {
  if (request.cursor !== undefined) return request.cursor.asOf;
  return request.query.asOf ?? (await newestEvent());
}

/**
 * A page of the feed from its matching rows in order, at most `limit` + 1 (the extra one tells
 * that more follow). `signalOf` reads a row's record (a reader that holds rows parses each once).
 */
export function feedPage<R extends SignalResult>(
  rows: readonly R[],
  request: FeedRequest,
  asOf: number | null,
  signalOf: (row: R) => Signal = toSignal,
): Page<Signal> {
  const { limit } = request.query;
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    rows: asOf === null ? [] : page.map((row) => signalAsOf(signalOf(row), asOf)),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(FEED_ORDERING, request.filters, { value: last.fired_at, id: last.signal_id }, asOf) : null,
    asOf,
  };
}

/** The tokens on any of `chains`, from their metadata (signals carry only the token id). */
const tokensOnChains = (chains: readonly Chain[]): Sql =>
  sql`SELECT ${column(tokens, 'token_id')} FROM ${table(tokens)} WHERE ${column(tokens, 'chain')} IN ${list(chains)}`;

/** The ids of the tokens on any of `chains`, for the feed's chain filter where it is not SQL. */
export async function tokenIdsOnChains(store: ReadStore, chains: readonly Chain[]): Promise<Set<string>> {
  return new Set((await store.query<{ token_id: string }>(tokensOnChains(chains))).map((row) => row.token_id));
}

/**
 * The signal feed (GET /v1/quant/signals) as of one time, newest first, keyset-paginated on
 * (fired_at, signal_id); the cursor carries the time, so later pages see the same statuses.
 */
export async function signalFeed(store: ReadStore, query: SignalFeedQuery): Promise<Page<Signal>> {
  const request = checkFeedQuery(query);
  const where: Sql[] = [];
  if (query.minScore !== undefined) where.push(atLeast(query.minScore.score, query.minScore.value));
  if (query.types !== undefined && query.types.length > 0) where.push(sql`${column(signals, 'type')} IN ${list(query.types)}`);
  if (query.chains !== undefined && query.chains.length > 0) where.push(sql`${column(signals, 'token_id')} IN (${tokensOnChains(query.chains)})`);
  if (query.marketCap !== undefined) where.push(atLeast('market_cap_usd', query.marketCap));
  if (query.liquidity !== undefined) where.push(atLeast('liquidity_usd', query.liquidity));
  if (query.createdAfter !== undefined) where.push(sql`${firedAt} > ${int64(query.createdAfter)}`);
  if (query.tokenId !== undefined) where.push(sql`${column(signals, 'token_id')} = ${query.tokenId}`);
  if (request.cursor !== undefined) {
    const after = request.cursor.position;
    where.push(sql`(${firedAt} < ${int64(after.value)} OR (${firedAt} = ${int64(after.value)} AND ${signalId} < ${after.id}))`);
  }
  const asOf = await feedTime(request, () => latestSignalEvent(store));
  if (asOf === null) return feedPage([], request, asOf);
  where.push(query.status === 'active' ? activeAt(asOf) : query.status === 'ended' ? endedBy(asOf) : firedBy(asOf));

  const rows = await store.query<SignalResult>(
    sql`SELECT ${SELECT} FROM ${table(signals)} WHERE ${allOf(where)} ORDER BY ${NEWEST_FIRST} LIMIT ${int64(query.limit + 1)}`,
  );
  return feedPage(rows, request, asOf);
}

/**
 * The signals active on any of `tokenIds`, newest first, at most `limit` (a cohort's active
 * signals are those on the tokens it converged on): now, or at `asOf` (epoch ms) when given.
 */
export async function activeSignalsOn(store: ReadStore, tokenIds: readonly string[], limit: number, asOf?: number): Promise<Signal[]> {
  checkLimit(limit, MAX_SIGNALS_LIMIT);
  if (tokenIds.length === 0) return [];
  const active = asOf === undefined ? sql`${column(signals, 'status')} = 'active'` : activeAt(asOf);
  const rows = await store.query<SignalResult>(
    sql`SELECT ${SELECT} FROM ${table(signals)}
        WHERE ${active} AND ${column(signals, 'token_id')} IN ${list([...new Set(tokenIds)])}
        ORDER BY ${NEWEST_FIRST} LIMIT ${int64(limit)}`,
  );
  return rows.map((row) => (asOf === undefined ? toSignal(row) : signalAsOf(toSignal(row), asOf)));
}

/**
 * One signal with its prior firings (GET /v1/quant/signals/{id}), as it stood at `asOf`
 * (epoch ms) when given; null when there is none, or none fired by then.
 */
export async function getSignal(store: ReadStore, id: string, asOf?: number): Promise<SignalDetail | null> {
  const [row] = await store.query<SignalResult>(sql`SELECT ${SELECT} FROM ${table(signals)} WHERE ${signalId} = ${id}`);
  if (!row || (asOf !== undefined && row.fired_at > asOf)) return null;
  const signal = toSignal(row);
  const earlier = sql`(${firedAt} < ${int64(signal.firedAt)} OR (${firedAt} = ${int64(signal.firedAt)} AND ${signalId} < ${signal.signalId}))`;
  const prior = await store.query<SignalResult>(
    sql`SELECT ${SELECT} FROM ${table(signals)}
        WHERE ${column(signals, 'rule_version')} = ${signal.ruleVersion} AND ${column(signals, 'token_id')} = ${signal.tokenId} AND ${earlier}
        ORDER BY ${NEWEST_FIRST} LIMIT ${int64(MAX_PRIOR_FIRINGS)}`,
  );
  const priorFirings = prior.map(toSignal);
  // Without a time asked, the answer is for the newest event it read.
  const at = asOf ?? Math.max(lastEventOf(signal), ...priorFirings.map(lastEventOf));
  return { signal: signalAsOf(signal, at), priorFirings: priorFirings.map((s) => signalAsOf(s, at)), asOf: at };
}
