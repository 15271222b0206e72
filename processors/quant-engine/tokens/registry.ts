import type { TokenMeta } from '../../../schemas/records.ts';
import { addressFamily, normaliseAddress, parseTokenRef, type TokenRef } from '../../../schemas/token-ref.ts';
import type { UnresolvedReason } from '../../../schemas/records/quant-market.ts';
import type { TokenInfo, TokenLookup } from '../contracts.ts';

/**
 * The token registry as of event time: the latest TokenMeta per token id, indexes by symbol
 * and address for resolving references, and per-token mention activity over the trailing
 * 24 hours so that a symbol (or bare address) shared by several tokens resolves to the most
 * active of them at that moment.
 */

const BUCKET_MS = 5 * 60_000;
/** 24 hours of 5-minute buckets: the trailing window starts on a 5-minute step. */
const BUCKETS = 288;

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

export interface TokensState {
  tokens: Map<string, RegisteredToken>;
  /** Upper-cased symbol → token ids, in listing order. */
  bySymbol: Map<string, string[]>;
  /** Canonical address → token ids; one EVM address can be deployed on several chains. */
  byAddress: Map<string, string[]>;
  activity: Map<string, Activity>;
}

export type RefResolution =
  | { ok: true; tokenId: string; kind: TokenRef['kind'] }
  | { ok: false; reason: UnresolvedReason };

export function createTokensState(): TokensState {
  return { tokens: new Map(), bySymbol: new Map(), byAddress: new Map(), activity: new Map() };
}

/** Applies a metadata record; returns the token as the registry now knows it. */
export function applyTokenMeta(state: TokensState, meta: TokenMeta): TokenInfo {
  const existing = state.tokens.get(meta.tokenId);
  if (existing && meta.ts < existing.updatedAt) {
    // A stale record: only its listing time can still teach us something.
    existing.listedAt = Math.min(existing.listedAt, meta.ts);
    return existing;
  }
  const addressKey = normaliseAddress(meta.address, addressFamily(meta.chain)) ?? meta.address;
  if (existing) {
    unindex(state.bySymbol, existing.symbol.toUpperCase(), existing.tokenId);
    unindex(state.byAddress, existing.addressKey, existing.tokenId);
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

/** Read access for downstream modules; reads the live state, so create it once per state object. */
export function tokenLookup(state: TokensState): TokenLookup {
  return {
    get: (tokenId) => state.tokens.get(tokenId),
    all: () => state.tokens.values(),
  };
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
  let a = state.activity.get(tokenId);
  if (!a) {
    a = { bucket, counts: new Uint32Array(BUCKETS), total: 0 };
    state.activity.set(tokenId, a);
  }
  roll(a, bucket);
  // A late mention older than the ring no longer counts for anything.
  if (bucket <= a.bucket - BUCKETS) return;
  a.counts[bucket % BUCKETS]++;
  a.total++;
}

/** Mentions of the token in the trailing 24 hours as of `t`, at 5-minute resolution. */
export function activity24h(state: TokensState, tokenId: string, t: number): number {
  const a = state.activity.get(tokenId);
  if (!a) return 0;
  roll(a, Math.floor(t / BUCKET_MS));
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

/** Moves the ring forward to `bucket`, emptying the buckets that fall out of the 24 hours. */
function roll(a: Activity, bucket: number): void {
  if (bucket <= a.bucket) return;
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
}

function index(map: Map<string, string[]>, key: string, tokenId: string): void {
  const ids = map.get(key);
  if (ids) ids.push(tokenId);
  else map.set(key, [tokenId]);
}

function unindex(map: Map<string, string[]>, key: string, tokenId: string): void {
  const ids = map.get(key);
  if (!ids) return;
  const rest = ids.filter((id) => id !== tokenId);
  if (rest.length > 0) map.set(key, rest);
  else map.delete(key);
}
