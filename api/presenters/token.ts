import type { Chain } from '../../schemas/records/primitives.ts';
import type { TokenRow } from '../../projections/tables.ts';
import { header } from '../schemas/common.ts';
import type { Token } from '../schemas/token.ts';

/** The token object (spec 2.3) from its metadata row. */
export function presentToken(row: TokenRow): Token {
  return {
    ...header('token'),
    id: row.token_id,
    symbol: row.symbol,
    name: row.name,
    // The tokens projection stores only validated metadata (TokenMetaSchema), whose chain is one of CHAINS.
    chain: row.chain as Chain,
    address: row.address,
    logoUrl: row.logo_url,
    status: row.status,
    narrative: { slug: row.narrative },
    sourceUrl: row.source_url,
  };
}

/** The token object of `id` from fetched metadata rows; null while its metadata has not reached the store. */
export function presentTokenOf(rows: ReadonlyMap<string, TokenRow>, id: string): Token | null {
  const row = rows.get(id);
  return row === undefined ? null : presentToken(row);
}
