import { resolveTokenRef } from '../../projections/read-models/token-ref.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { tokenRowsByIds } from '../../projections/read-models/token-rows.ts';
import { latestSnapshot, latestSnapshotsOf } from '../../projections/read-models/tokens.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { parseTokenRef } from '../../schemas/token-ref.ts';
import { ReadBatcher } from './read-batcher.ts';

/** How long a token found with its latest snapshot is served from memory before it is refreshed. */
export const SNAPSHOT_CACHE_TTL_MS = 1_000;
const SNAPSHOT_CACHE_MAX = 10_000;
/** Token ids per batched load. */
const LOAD_BATCH_MAX = 1_000;

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
 *
 * Background refreshes go in passes: the pairs of every token id that fell due meanwhile are
 * read with two queries in all, so a client cycling through many tokens costs the store two
 * queries a pass rather than two per token, which a store busy with a catch-up (tens of ms a
 * query) could not keep up with. Other references (a symbol names the most active token, which
 * changes) are resolved again one by one. Loads by token id are batched the same way (see
 * ReadBatcher), so many tokens asked for at once while the cache is cold cost two queries a batch.
 */
export class TokenSnapshots {
  private readonly store: ReadStore;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly cache = new Map<string, Entry>();
  /** Loads in flight by reference: requests that find a pair too old wait for one load, not one each. */
  private readonly loading = new Map<string, Promise<TokenLookup>>();
  /**
   * References due for a background refresh, read by the next pass. Apart from the batched
   * loads on purpose: a pass runs alongside a load rather than queuing behind it (sharing the
   * batcher halved the rate during a catch-up in the start bench).
   */
  private readonly due = new Set<string>();
  private pass: Promise<void> | null = null;
  /** Loads by token id, batched: a client asking for many tokens at once costs two queries a batch. */
  private readonly byId = new ReadBatcher((ids) => this.pairsOf(ids), LOAD_BATCH_MAX);

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
      this.due.add(ref);
      this.pass ??= this.refreshDue();
    }
    return { token: entry.token, snapshot: entry.snapshot };
  }

  /** Refreshes the due pairs, pass after pass, until none is left. */
  private async refreshDue(): Promise<void> {
    // The requests of this turn of the event loop join the first pass.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.due.size > 0) {
        const refs = [...this.due];
        this.due.clear();
        await this.refresh(refs);
      }
    } finally {
      this.pass = null;
    }
  }

  /** A failed refresh drops the pair, so the next request meets the store's error itself. */
  private async refresh(refs: string[]): Promise<void> {
    const entries = new Map<string, Entry>();
    for (const ref of refs) {
      const entry = this.cache.get(ref);
      if (!entry) continue;
      if (tokenIdOf(ref) !== null) entries.set(ref, entry);
      else void this.load(ref).catch(() => this.cache.delete(ref));
    }
    if (entries.size === 0) return;
    const loadedAt = this.now();
    try {
      const pairs = await this.pairsOf([...entries.values()].map((entry) => entry.token.token_id));
      for (const [ref, entry] of entries) {
        // A load that replaced the pair meanwhile read it at least as late.
        if (this.cache.get(ref) !== entry) continue;
        const pair = pairs.get(entry.token.token_id);
        // Set anew, the pair goes to the end of the insertion order, as a load puts it. Gone from
        // the store, it is dropped: the next request loads it and answers as the store now says.
        this.cache.delete(ref);
        if (pair?.snapshot) this.cache.set(ref, { token: pair.token, snapshot: pair.snapshot, loadedAt, refreshing: false });
      }
    } catch {
      for (const [ref, entry] of entries) if (this.cache.get(ref) === entry) this.cache.delete(ref);
    }
  }

  /** The tokens of `ids` that exist, each with its latest snapshot: two queries for them all. */
  private async pairsOf(ids: readonly string[]): Promise<Map<string, NonNullable<TokenLookup>>> {
    const [tokens, snapshots] = await Promise.all([tokenRowsByIds(this.store, ids), latestSnapshotsOf(this.store, ids)]);
    return new Map([...tokens].map(([id, token]) => [id, { token, snapshot: snapshots.get(id) ?? null }]));
  }

  /** A reference other than a token id, resolved by the store, with the token's latest snapshot. */
  private async resolve(ref: string): Promise<TokenLookup> {
    const token = await resolveTokenRef(this.store, ref);
    return token === null ? null : { token, snapshot: await latestSnapshot(this.store, token.token_id) };
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
    const id = tokenIdOf(ref);
    const found = id === null ? await this.resolve(ref) : ((await this.byId.get(id)) ?? null);
    this.cache.delete(ref);
    if (found?.snapshot == null) return found;
    const { token, snapshot } = found;
    // Map order is insertion order: dropping the first entry drops the oldest.
    if (this.cache.size >= SNAPSHOT_CACHE_MAX) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(ref, { token, snapshot, loadedAt, refreshing: false });
    return { token, snapshot };
  }
}

/** The token id `ref` is, when it is one; other references are resolved by the store. */
function tokenIdOf(ref: string): string | null {
  const parsed = parseTokenRef(ref);
  return parsed.ok && parsed.ref.kind === 'id' ? parsed.ref.id : null;
}
