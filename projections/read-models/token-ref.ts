import { column, columns, list, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import { parseTokenRef } from '../../schemas/token-ref.ts';
import { tokens, type TokenRow } from '../../presenters/tokens-table.ts';
import { latestSnapshots } from '../tables/quant.ts';
import type { ReadStore } from './cursor.ts';

/**
 * Token references in requests (spec 2.3: `$SYMBOL`, `SYMBOL`, `tk_<id>`, `<chain>:<address>`,
 * `<address>`) resolved against the tokens table: a token is known to the API once its
 * metadata is projected. Symbols and EVM addresses compare case-insensitively, Solana
 * addresses exactly (schemas/token-ref.ts normalises the reference the same way).
 *
 * Most active: when a symbol or a bare address names several tokens, the one with the most
 * mentions in the 24 hours up to its latest snapshot (mentions_24h of latest_snapshots) wins;
 * a token without a snapshot or with the count unknown counts as fewer than 0 mentions; ties
 * go to the smallest token id. This is the quant engine's rule for posts (trailing 24h
 * mentions) read from the latest snapshot instead of the engine's live state.
 */

/** The metadata row of the token `ref` names; null when it names none or is no token reference. */
export async function resolveTokenRef(store: ReadStore, ref: string): Promise<TokenRow | null> {
  const parsed = parseTokenRef(ref);
  if (!parsed.ok) return null;
  const r = parsed.ref;
  const address = column(tokens, 'address');
  // Canonical EVM addresses are lower-case; metadata may carry a checksummed one.
  const addressIs = (family: 'evm' | 'solana', value: string): Sql =>
    family === 'evm' ? sql`lower(${address}) = ${value}` : sql`${address} = ${value}`;
  let where: Sql;
  switch (r.kind) {
    case 'id':
      where = sql`${column(tokens, 'token_id')} = ${r.id}`;
      break;
    case 'symbol':
      where = sql`upper(${column(tokens, 'symbol')}) = ${r.symbol}`;
      break;
    case 'chain_address':
      where = sql`${column(tokens, 'chain')} = ${r.chain} AND ${addressIs(r.family, r.address)}`;
      break;
    case 'address':
      where = addressIs(r.family, r.address);
      break;
  }
  const rows = await store.query<TokenRow>(sql`SELECT ${columns(tokens)} FROM ${table(tokens)} WHERE ${where}`);
  if (rows.length <= 1) return rows[0] ?? null;
  const active = await mentions24h(store, rows.map((row) => row.token_id));
  const score = (row: TokenRow) => active.get(row.token_id) ?? -1;
  return rows.reduce((best, row) =>
    score(row) > score(best) || (score(row) === score(best) && row.token_id < best.token_id) ? row : best,
  );
}

/** mentions_24h of each token's latest snapshot; tokens without a snapshot or a count are absent. */
async function mentions24h(store: ReadStore, tokenIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await store.query<{ token_id: string; mentions_24h: number | null }>(
    sql`SELECT ${columns(latestSnapshots, ['token_id', 'mentions_24h'])} FROM ${table(latestSnapshots)}
        WHERE ${column(latestSnapshots, 'token_id')} IN ${list(tokenIds)}`,
  );
  return new Map(rows.flatMap((row) => (row.mentions_24h === null ? [] : [[row.token_id, row.mentions_24h] as const])));
}
