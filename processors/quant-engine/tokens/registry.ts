import type { TokenMeta } from '../../../schemas/records.ts';
import { addressFamily, normaliseAddress, parseTokenRef, type TokenRef } from '../../../schemas/token-ref.ts';
import type { UnresolvedReason } from '../../../schemas/records/quant-market.ts';
import { appendToBlocks, readBlocks } from '../../runtime/state/block-lists.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';
import type { TokenInfo, TokenLookup } from '../contracts.ts';

/**
 * The token registry as of event time: the latest TokenMeta per token id, indexes by symbol
 * and address for resolving references, and per-token mention activity over the trailing
 * 24 hours so that a symbol (or bare address) shared by several tokens resolves to the most
 * active of them at that moment.
 *
 * Everything lives in tables keyed by token id, symbol or address, so resolving a reference
 * costs a few gets and a checkpoint writes only the tokens that changed; the order in which
 * tokens were first listed (the order of `all()`) is kept in blocks of ids.
 */

const BUCKET_MS = 5 * 60_000;
/** 24 hours of 5-minute buckets: the trailing window starts on a 5-minute step. */
const BUCKETS = 288;
/** Token ids per block of the listing order: listing a token changes only the last block. */
const LISTING_BLOCK = 256;
const LISTED_KEY = 'listed';

interface RegisteredToken extends TokenInfo {
  /** Event time of the record the fields come from; an older record arriving later is ignored. */
  updatedAt: number;
  /** Key of the token in `byAddress`. */
  addressKey: string;
}

/** Mentions per 5-minute bucket, a ring indexed by absolute bucket number modulo BUCKETS. */
interface Activity {
  /** Absolute number of the newest bucket the ring holds. */
  bucket: number;
  counts: Uint32Array;
  total: number;
}

/**
 * Kept in tables (runtime/state/tables.ts): a checkpoint of a task's store on disk writes the
 * tokens listed or re-listed, their index entries and the activity of the tokens mentioned.
 */
export interface TokensState {
  /** Token id → the token as its latest metadata describes it. */
  tokens: KeyedTable<RegisteredToken>;
  /** Block number → token ids in the order first listed, LISTING_BLOCK to a block. */
  listing: KeyedTable<string[]>;
  /** Under LISTED_KEY: how many tokens were listed, the length of `listing`. */
  listed: KeyedTable<number>;
  /** Upper-cased symbol → token ids, in listing order. */
  bySymbol: KeyedTable<string[]>;
  /** Canonical address → token ids; one EVM address can be deployed on several chains. */
  byAddress: KeyedTable<string[]>;
  /** Token id → its mentions of the trailing 24 hours. */
  activity: KeyedTable<Activity>;
}

export type RefResolution =
  | { ok: true; tokenId: string; kind: TokenRef['kind'] }
  | { ok: false; reason: UnresolvedReason };

export function createTokensState(tables: TableSource = IN_MEMORY_TABLES): TokensState {
  return {
    tokens: tables.table('tokens-registered'),
    listing: tables.table('tokens-listing'),
    listed: tables.table('tokens-listed'),
    bySymbol: tables.table('tokens-by-symbol'),
    byAddress: tables.table('tokens-by-address'),
    activity: tables.table('tokens-activity'),
  };
}

/** Applies a metadata record; returns the token as the registry now knows it. */
export function applyTokenMeta(state: TokensState, meta: TokenMeta): TokenInfo {
  const existing = state.tokens.get(meta.tokenId);
  if (existing && meta.ts < existing.updatedAt) {
    // A stale record: only its listing time can still teach us something.
    if (meta.ts >= existing.listedAt) return existing;
    const relisted = { ...existing, listedAt: meta.ts };
    state.tokens.set(meta.tokenId, relisted);
    return relisted;
  }
  const addressKey = normaliseAddress(meta.address, addressFamily(meta.chain)) ?? meta.address;
  if (existing) {
    unindex(state.bySymbol, existing.symbol.toUpperCase(), existing.tokenId);
    unindex(state.byAddress, existing.addressKey, existing.tokenId);
  } else {
    list(state, meta.tokenId);
  }
  const token: RegisteredToken = {
    tokenId: meta.tokenId,
    symbol: meta.symbol,
    name: meta.name,
    chain: meta.chain,
    address: meta.address,
    narrative: meta.narrative,
    status: meta.status,
    listedAt: existing ? Math.min(existing.listedAt, meta.ts) : meta.ts,
    updatedAt: meta.ts,
    addressKey,
  };
  state.tokens.set(token.tokenId, token);
  index(state.bySymbol, meta.symbol.toUpperCase(), token.tokenId);
  index(state.byAddress, addressKey, token.tokenId);
  return token;
}

/** Appends a token new to the registry to the listing order. */
function list(state: TokensState, tokenId: string): void {
  const listed = state.listed.get(LISTED_KEY) ?? 0;
  appendToBlocks(state.listing, '', LISTING_BLOCK, listed, tokenId);
  state.listed.set(LISTED_KEY, listed + 1);
}

/** Read access for downstream modules; reads the live state, so create it once per state object. */
export function tokenLookup(state: TokensState): TokenLookup {
  return {
    get: (tokenId) => state.tokens.get(tokenId),
    all: () => listedTokens(state),
  };
}

/** Every token, in the order first listed. */
function listedTokens(state: TokensState): TokenInfo[] {
  return readBlocks(state.listing, '', LISTING_BLOCK, state.listed.get(LISTED_KEY) ?? 0).map((tokenId) => state.tokens.get(tokenId)!);
}

/**
 * Resolves a reference as written in a post (or a request) at event time `t`. Symbols are
 * case-insensitive, as are EVM addresses; Solana addresses are case-sensitive. When several
 * tokens match, the most active one wins (see mostActive).
 */
export function resolveTokenRef(state: TokensState, ref: string, t: number): RefResolution {
  const parsed = parseTokenRef(ref);
  if (!parsed.ok) return { ok: false, reason: 'invalid' };
  const r = parsed.ref;
  switch (r.kind) {
    case 'id':
      return state.tokens.has(r.id) ? { ok: true, tokenId: r.id, kind: r.kind } : { ok: false, reason: 'unknown_id' };
    case 'symbol': {
      const tokenId = mostActive(state, state.bySymbol.get(r.symbol) ?? [], t);
      return tokenId ? { ok: true, tokenId, kind: r.kind } : { ok: false, reason: 'unknown_symbol' };
    }
    case 'chain_address': {
      const onChain = (state.byAddress.get(r.address) ?? []).filter((id) => state.tokens.get(id)!.chain === r.chain);
      const tokenId = mostActive(state, onChain, t);
      return tokenId ? { ok: true, tokenId, kind: r.kind } : { ok: false, reason: 'unknown_address' };
    }
    case 'address': {
      const tokenId = mostActive(state, state.byAddress.get(r.address) ?? [], t);
      return tokenId ? { ok: true, tokenId, kind: r.kind } : { ok: false, reason: 'unknown_address' };
    }
  }
}

/** Counts a resolved mention of the token at `t` towards its trailing-24h activity. */
export function noteMention(state: TokensState, tokenId: string, t: number): void {
  const bucket = Math.floor(t / BUCKET_MS);
  const a = state.activity.get(tokenId) ?? { bucket, counts: new Uint32Array(BUCKETS), total: 0 };
  roll(a, bucket);
  // A late mention older than the ring no longer counts for anything.
  if (bucket > a.bucket - BUCKETS) {
    a.counts[bucket % BUCKETS]++;
    a.total++;
  }
  state.activity.set(tokenId, a);
}

/**
 * Mentions of the token in the trailing 24 hours as of `t`, at 5-minute resolution. Asking
 * moves the token's ring forward to `t` for good (and so writes it): a later question about
 * an earlier time, or a late mention, finds the ring where the latest question left it.
 */
export function activity24h(state: TokensState, tokenId: string, t: number): number {
  const a = state.activity.get(tokenId);
  if (!a) return 0;
  if (roll(a, Math.floor(t / BUCKET_MS))) state.activity.set(tokenId, a);
  return a.total;
}

/**
 * The most active candidate as of `t`: most mentions in the trailing 24h; ties go to the
 * earliest listed, then to the smallest token id, so the choice is deterministic.
 */
function mostActive(state: TokensState, candidates: string[], t: number): string | undefined {
  if (candidates.length <= 1) return candidates[0];
  let best: { id: string; count: number; listedAt: number } | undefined;
  for (const id of candidates) {
    const c = { id, count: activity24h(state, id, t), listedAt: state.tokens.get(id)!.listedAt };
    if (
      !best ||
      c.count > best.count ||
      (c.count === best.count && (c.listedAt < best.listedAt || (c.listedAt === best.listedAt && c.id < best.id)))
    ) {
      best = c;
    }
  }
  return best?.id;
}

/** Moves the ring forward to `bucket`, emptying the buckets that fall out of the 24 hours; false when it was there already. */
function roll(a: Activity, bucket: number): boolean {
  if (bucket <= a.bucket) return false;
  if (bucket - a.bucket >= BUCKETS) {
    a.counts.fill(0);
    a.total = 0;
  } else {
    for (let b = a.bucket + 1; b <= bucket; b++) {
      const i = b % BUCKETS;
      a.total -= a.counts[i];
      a.counts[i] = 0;
    }
  }
  a.bucket = bucket;
  return true;
}

function index(table: KeyedTable<string[]>, key: string, tokenId: string): void {
  table.set(key, [...(table.get(key) ?? []), tokenId]);
}

function unindex(table: KeyedTable<string[]>, key: string, tokenId: string): void {
  const ids = table.get(key);
  if (!ids) return;
  const rest = ids.filter((id) => id !== tokenId);
  if (rest.length > 0) table.set(key, rest);
  else table.delete(key);
}
