import type { TokenRow } from './tokens-table.ts';
import type { Chain } from '../schemas/records/primitives.ts';
import { header } from './resource.ts';

/** The token object (spec 2.3); api/schemas/token.ts documents it. */
export interface PresentedToken extends ReturnType<typeof header<'token'>> {
  id: string;
  symbol: string;
  name: string;
  chain: Chain;
  address: string;
  logoUrl: string | null;
  status: string;
  narrative: { slug: string };
  sourceUrl: string | null;
}

/** The token object from its metadata row. */
export function presentToken(row: TokenRow): PresentedToken {
  return {
    ...header('token'),
    id: row.token_id,
    symbol: row.symbol,
    name: row.name,
    // Token rows hold only validated metadata (TokenMetaSchema), whose chain is one of CHAINS.
    chain: row.chain as Chain,
    address: row.address,
    logoUrl: row.logo_url,
    status: row.status,
    narrative: { slug: row.narrative },
    sourceUrl: row.source_url,
  };
}

/** The token object of `id` from fetched metadata rows; null while its metadata is unknown. */
export function presentTokenOf(rows: ReadonlyMap<string, TokenRow>, id: string): PresentedToken | null {
  const row = rows.get(id);
  return row === undefined ? null : presentToken(row);
}
