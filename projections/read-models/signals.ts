import { column, columns, float64, int64, list, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import { SCORE_NAMES, type Chain, type ScoreName } from '../../schemas/records/primitives.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { tokens } from '../tables.ts';
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
}

export interface SignalDetail {
  signal: Signal;
  /** Earlier firings of the same rule version on the same token, newest first, at most 20. */
  priorFirings: Signal[];
}

export const MAX_SIGNALS_LIMIT = 100;
export const MAX_PRIOR_FIRINGS = 20;
const STATUSES: ReadonlySet<string> = new Set(['active', 'ended', 'all']);
const SCORES: ReadonlySet<string> = new Set(SCORE_NAMES);

interface SignalResult {
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
const toSignal = (row: SignalResult): Signal => JSON.parse(row.record) as Signal;

function minimum(name: 'market_cap_usd' | 'liquidity_usd' | ScoreName, value: number, what: string): Sql {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new ReadModelError('INVALID_ARGUMENT', `${what} must be a finite number`);
  return known(sql`${column(signals, name)} >= ${float64(value)}`);
}

/** The signal feed (GET /v1/quant/signals), newest first, keyset-paginated on (fired_at, signal_id). */
export async function signalFeed(store: ReadStore, query: SignalFeedQuery): Promise<Page<Signal>> {
  checkLimit(query.limit, MAX_SIGNALS_LIMIT);
  if (!STATUSES.has(query.status)) throw new ReadModelError('INVALID_ARGUMENT', 'status must be active, ended or all');
  const where: Sql[] = [];
  if (query.minScore !== undefined) {
    if (!SCORES.has(query.minScore.score)) {
      throw new ReadModelError('INVALID_FIELD', `unknown score ${JSON.stringify(query.minScore.score)}`);
    }
    where.push(minimum(query.minScore.score, query.minScore.value, 'min_score'));
  }
  if (query.types !== undefined && query.types.length > 0) where.push(sql`${column(signals, 'type')} IN ${list(query.types)}`);
  if (query.chains !== undefined && query.chains.length > 0) {
    // Signals carry only the token id; the chain is the token's, from its metadata.
    const onChains = sql`SELECT ${column(tokens, 'token_id')} FROM ${table(tokens)} WHERE ${column(tokens, 'chain')} IN ${list(query.chains)}`;
    where.push(sql`${column(signals, 'token_id')} IN (${onChains})`);
  }
  if (query.marketCap !== undefined) where.push(minimum('market_cap_usd', query.marketCap, 'market_cap'));
  if (query.liquidity !== undefined) where.push(minimum('liquidity_usd', query.liquidity, 'liquidity'));
  if (query.createdAfter !== undefined) where.push(sql`${firedAt} > ${int64(query.createdAfter)}`);
  if (query.status !== 'all') where.push(sql`${column(signals, 'status')} = ${query.status}`);
  if (query.tokenId !== undefined) where.push(sql`${column(signals, 'token_id')} = ${query.tokenId}`);

  const ordering = 'signals:fired_at:desc';
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
  if (query.cursor !== undefined) {
    const after = decodeCursor(query.cursor, ordering, filters);
    if (after.value === null || !Number.isSafeInteger(after.value)) throw new ReadModelError('INVALID_CURSOR', 'invalid cursor');
    where.push(sql`(${firedAt} < ${int64(after.value)} OR (${firedAt} = ${int64(after.value)} AND ${signalId} < ${after.id}))`);
  }

  const rows = await store.query<SignalResult>(
    sql`SELECT ${SELECT} FROM ${table(signals)} WHERE ${allOf(where)} ORDER BY ${NEWEST_FIRST} LIMIT ${int64(query.limit + 1)}`,
  );
  const hasMore = rows.length > query.limit;
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  return {
    rows: page.map(toSignal),
    hasMore,
    nextCursor: hasMore && last ? encodeCursor(ordering, filters, { value: last.fired_at, id: last.signal_id }) : null,
  };
}

/**
 * The active signals on any of `tokenIds`, newest first, at most `limit` (a cohort's active
 * signals are those on the tokens it converged on).
 */
export async function activeSignalsOn(store: ReadStore, tokenIds: readonly string[], limit: number): Promise<Signal[]> {
  checkLimit(limit, MAX_SIGNALS_LIMIT);
  if (tokenIds.length === 0) return [];
  const rows = await store.query<SignalResult>(
    sql`SELECT ${SELECT} FROM ${table(signals)}
        WHERE ${column(signals, 'status')} = 'active' AND ${column(signals, 'token_id')} IN ${list([...new Set(tokenIds)])}
        ORDER BY ${NEWEST_FIRST} LIMIT ${int64(limit)}`,
  );
  return rows.map(toSignal);
}

/** One signal with its prior firings (GET /v1/quant/signals/{id}); null when there is none. */
export async function getSignal(store: ReadStore, id: string): Promise<SignalDetail | null> {
  const [row] = await store.query<SignalResult>(sql`SELECT ${SELECT} FROM ${table(signals)} WHERE ${signalId} = ${id}`);
  if (!row) return null;
  const signal = toSignal(row);
  const earlier = sql`(${firedAt} < ${int64(signal.firedAt)} OR (${firedAt} = ${int64(signal.firedAt)} AND ${signalId} < ${signal.signalId}))`;
  const prior = await store.query<SignalResult>(
    sql`SELECT ${SELECT} FROM ${table(signals)}
        WHERE ${column(signals, 'rule_version')} = ${signal.ruleVersion} AND ${column(signals, 'token_id')} = ${signal.tokenId} AND ${earlier}
        ORDER BY ${NEWEST_FIRST} LIMIT ${int64(MAX_PRIOR_FIRINGS)}`,
  );
  return { signal, priorFirings: prior.map(toSignal) };
}
