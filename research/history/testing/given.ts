import { pino } from 'pino';
import { DuckDbStore } from '../../../infra/store/duckdb-store.ts';
import { migrationsDir } from '../../../projections/migrations/index.ts';
import { RULE_FIELDS, type RuleField, type SnapshotHistoryRow } from '../../../projections/tables/quant.ts';
import { PROJECTION_TABLES } from '../../../projections/tables.ts';
import type { TokenRow } from '../../../presenters/tokens-table.ts';

/**
 * Hand-made histories for research tests: snapshot_history rows from a few fields, and an
 * embedded store holding them. Fields not given are unknown (NULL), as in a real snapshot
 * that lacks them.
 */

export const MIN = 60_000;
export const HOUR = 60 * MIN;
/** 2026-01-01T00:00:00Z: round times make failing expectations readable. */
export const T0 = Date.UTC(2026, 0, 1);

export interface GivenSnapshot {
  token: string;
  ts: number;
  price?: number | null;
  liquidity?: number | null;
  chain?: string;
  fields?: Partial<Record<RuleField, number | null>>;
}

export function snapshotRow(s: GivenSnapshot): SnapshotHistoryRow {
  const row: Record<string, unknown> = {
    token_id: s.token,
    ts: s.ts,
    version: 1,
    snapshot_id: `snap_${Buffer.from(`${s.token}:${s.ts}`).toString('hex').slice(0, 24)}`,
    chain: s.chain ?? 'solana',
    narrative: 'memes',
    divergence_state: 'none',
  };
  for (const f of RULE_FIELDS) row[f] = s.fields?.[f] ?? null;
  row.price_usd = s.price === undefined ? 1 : s.price;
  row.liquidity_usd = s.liquidity === undefined ? 100_000 : s.liquidity;
  return row as SnapshotHistoryRow;
}

/** A token's snapshots every `stepMs` from `from` (inclusive) to `to` (exclusive), prices from `priceAt`. */
export function series(
  token: string,
  from: number,
  to: number,
  stepMs: number,
  at: (ts: number, i: number) => Omit<GivenSnapshot, 'token' | 'ts'>,
): GivenSnapshot[] {
  const out: GivenSnapshot[] = [];
  for (let ts = from, i = 0; ts < to; ts += stepMs, i++) out.push({ token, ts, ...at(ts, i) });
  return out;
}

export function tokenRow(token: string, status: string, ts: number): TokenRow {
  return { token_id: token, ts, symbol: token.toUpperCase(), name: token, chain: 'solana', address: token, logo_url: null, status, narrative: 'memes', source_url: null };
}

export async function embeddedStore(snapshots: readonly GivenSnapshot[], tokenRows: readonly TokenRow[] = []): Promise<DuckDbStore<typeof PROJECTION_TABLES>> {
  return embeddedStoreOfRows(snapshots.map(snapshotRow), tokenRows);
}

export async function embeddedStoreOfRows(
  rows: readonly SnapshotHistoryRow[],
  tokenRows: readonly TokenRow[] = [],
): Promise<DuckDbStore<typeof PROJECTION_TABLES>> {
  const store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
  await store.migrate();
  if (rows.length > 0) await store.upsert('snapshot_history', rows);
  if (tokenRows.length > 0) await store.upsert('tokens', tokenRows);
  return store;
}
