import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { tokenRowsByIds } from '../../projections/read-models/token-rows.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { RefreshedLookup } from './refreshed-lookup.ts';

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
 * signals, analogs, cohorts). Metadata changes rarely while every such response needs it:
 * rows found are held and all read again together once `ttlMs` has passed (a row is the
 * same object until then, which lets the routes keep what they rendered of it); ids without
 * metadata are not kept, so a new token shows as soon as it is projected.
 */
export class TokenDirectory {
  private readonly lookup: RefreshedLookup<TokenRow>;

  constructor({ store, now, ttlMs = TOKEN_METADATA_TTL_MS }: TokenDirectoryOptions) {
    this.lookup = new RefreshedLookup({ read: (ids) => tokenRowsByIds(store, ids), now, ttlMs, max: TOKEN_METADATA_MAX });
  }

  /** The rows of `ids` that have metadata, by id; one store query for those not held. */
  rows(ids: readonly string[]): Promise<Map<string, TokenRow>> {
    return this.lookup.get(ids);
  }
}
