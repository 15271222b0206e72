import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { tokenRowsByIds } from '../../projections/read-models/token-rows.ts';
import type { TokenRow } from '../../projections/tables.ts';

/** How long a token's metadata is served from memory: the bound on how late a change of it shows. */
export const TOKEN_METADATA_TTL_MS = 5_000;
const TOKEN_METADATA_MAX = 20_000;

export interface TokenDirectoryOptions {
  store: ReadStore;
  now: () => number;
  ttlMs?: number;
}

/**
 * Token metadata rows by id for the responses that embed the token object (lists, scans,
 * signals, analogs, cohorts). Metadata changes rarely while every such response needs it, and
 * a store query costs milliseconds of the event loop, so rows found are kept for `ttlMs`;
 * ids without metadata are not kept, so a new token shows as soon as it is projected.
 */
export class TokenDirectory {
  private readonly store: ReadStore;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly cache = new Map<string, { row: TokenRow; loadedAt: number }>();

  constructor({ store, now, ttlMs = TOKEN_METADATA_TTL_MS }: TokenDirectoryOptions) {
    this.store = store;
    this.now = now;
    this.ttlMs = ttlMs;
  }

  /** The rows of `ids` that have metadata, by id; one store query for those not held. */
  async rows(ids: readonly string[]): Promise<Map<string, TokenRow>> {
    const at = this.now();
    const found = new Map<string, TokenRow>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const entry = this.cache.get(id);
      if (entry !== undefined && at - entry.loadedAt < this.ttlMs) found.set(id, entry.row);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    for (const [id, row] of await tokenRowsByIds(this.store, missing)) {
      this.cache.delete(id);
      // Map order is insertion order: dropping the first entry drops the oldest.
      if (this.cache.size >= TOKEN_METADATA_MAX) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(id, { row, loadedAt: at });
      found.set(id, row);
    }
    return found;
  }
}
