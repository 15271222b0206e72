import { resolveTokenRef } from '../../projections/read-models/token-ref.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { latestSnapshot } from '../../projections/read-models/tokens.ts';
import type { TokenRow } from '../../projections/tables.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';

/** How long a token found with its latest snapshot is served from memory before it is refreshed. */
export const SNAPSHOT_CACHE_TTL_MS = 1_000;
const SNAPSHOT_CACHE_MAX = 10_000;

export type TokenLookup = { token: TokenRow; snapshot: QuantSnapshot | null } | null;

interface Entry {
  token: TokenRow;
  snapshot: QuantSnapshot;
  loadedAt: number;
  refreshing: boolean;
}

export interface TokenSnapshotsOptions {
  store: ReadStore;
  now: () => number;
  ttlMs?: number;
}

/**
 * A token reference resolved to the token and its latest snapshot, for the token snapshot and
 * analogs endpoints. Two store queries per request would bound GET /v1/quant/token/{token} by
 * the store's per-query cost, while snapshots change every few minutes; so a found pair is
 * kept per reference. Within `ttlMs` of loading it is served as is; in the next `ttlMs` it is
 * still served while one background load replaces it, so requests for a known token never
 * queue behind the store; older, it is loaded again before answering. A pair is thus at most
 * 2 × `ttlMs` old (plus one load). What is not found (no token, no snapshot yet) is not kept,
 * so a new token or its first snapshot shows as soon as it is projected.
 */
export class TokenSnapshots {
  private readonly store: ReadStore;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly cache = new Map<string, Entry>();
  /** Loads in flight by reference: requests that find a pair too old wait for one load, not one each. */
  private readonly loading = new Map<string, Promise<TokenLookup>>();

  constructor({ store, now, ttlMs = SNAPSHOT_CACHE_TTL_MS }: TokenSnapshotsOptions) {
    this.store = store;
    this.now = now;
    this.ttlMs = ttlMs;
  }

  /** The token `ref` names with its latest snapshot (null before the first); null when no token matches. */
  async find(ref: string): Promise<TokenLookup> {
    const entry = this.cache.get(ref);
    const age = entry === undefined ? Infinity : this.now() - entry.loadedAt;
    if (entry === undefined || age >= 2 * this.ttlMs) return this.load(ref);
    if (age >= this.ttlMs && !entry.refreshing) {
      entry.refreshing = true;
      // A failed refresh drops the pair, so the next request meets the store's error itself.
      this.load(ref).catch(() => this.cache.delete(ref));
    }
    return { token: entry.token, snapshot: entry.snapshot };
  }

  private load(ref: string): Promise<TokenLookup> {
    let loading = this.loading.get(ref);
    if (!loading) {
      loading = this.read(ref).finally(() => this.loading.delete(ref));
      this.loading.set(ref, loading);
    }
    return loading;
  }

  private async read(ref: string): Promise<TokenLookup> {
    const loadedAt = this.now();
    const token = await resolveTokenRef(this.store, ref);
    const snapshot = token === null ? null : await latestSnapshot(this.store, token.token_id);
    this.cache.delete(ref);
    if (token === null || snapshot === null) return token === null ? null : { token, snapshot };
    // Map order is insertion order: dropping the first entry drops the oldest.
    if (this.cache.size >= SNAPSHOT_CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(ref, { token, snapshot, loadedAt, refreshing: false });
    return { token, snapshot };
  }
}
