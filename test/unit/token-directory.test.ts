import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TokenDirectory } from '../../api/services/token-directory.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES, type TokenRow } from '../../projections/tables.ts';

const row = (id: string, status: string, ts: number): TokenRow => ({
  token_id: id,
  ts,
  symbol: id.toUpperCase(),
  name: `Token ${id}`,
  chain: 'base',
  address: `0x${id}`,
  logo_url: null,
  status,
  narrative: 'memes',
  source_url: null,
});

describe('TokenDirectory', () => {
  let store: DuckDbStore<typeof PROJECTION_TABLES>;
  let now = 0;
  let directory: TokenDirectory;

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    now = 0;
    directory = new TokenDirectory({ store, now: () => now, ttlMs: 5_000 });
  });

  afterEach(async () => {
    await store.close();
  });

  it('serves metadata from memory for the TTL, then shows a change', async () => {
    await store.upsert('tokens', [row('tk_a', 'active', 1)]);
    expect((await directory.rows(['tk_a', 'tk_a'])).get('tk_a')?.status).toBe('active');
    await store.upsert('tokens', [row('tk_a', 'dead', 2)]);
    now = 4_999;
    expect((await directory.rows(['tk_a'])).get('tk_a')?.status).toBe('active');
    now = 5_000;
    expect((await directory.rows(['tk_a'])).get('tk_a')?.status).toBe('dead');
  });

  it('keeps no miss: a token shows as soon as its metadata is stored', async () => {
    expect((await directory.rows(['tk_b'])).has('tk_b')).toBe(false);
    await store.upsert('tokens', [row('tk_b', 'active', 1)]);
    expect((await directory.rows(['tk_b'])).get('tk_b')?.symbol).toBe('TK_B');
  });
});
