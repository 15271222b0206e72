import { column, columns, list, sql, table } from '../../infra/store/sql-literal.ts';
import { tokens, type TokenRow } from '../../presenters/tokens-table.ts';
import type { ReadStore } from './cursor.ts';

/**
 * The metadata rows of the given tokens in one query, by token id, for responses that embed
 * the token object (spec 2.3). Ids without metadata are absent from the map.
 */
export async function tokenRowsByIds(store: ReadStore, ids: readonly string[]): Promise<Map<string, TokenRow>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const rows = await store.query<TokenRow>(
    sql`SELECT ${columns(tokens)} FROM ${table(tokens)} WHERE ${column(tokens, 'token_id')} IN ${list(unique)}`,
  );
  return new Map(rows.map((row) => [row.token_id, row]));
}
