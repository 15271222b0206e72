import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TokenDirectory } from '../../api/services/token-directory.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { waitFor } from '../../infra/wait.ts';

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
  let queries: number;

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    now = 0;
    queries = 0;
    const counting = { query: ((statement: Parameters<typeof store.query>[0]) => (queries++, store.query(statement))) as typeof store.query };
    directory = new TokenDirectory({ store: counting, now: () => now, ttlMs: 5_000 });
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

  it('reads every held row again in one statement once the TTL has passed, and only misses in between', async () => {
    await store.upsert('tokens', ['tk_a', 'tk_b', 'tk_c'].map((id) => row(id, 'active', 1)));
    await directory.rows(['tk_a']);
    await directory.rows(['tk_b', 'tk_c']);
    expect(queries).toBe(2);
    await directory.rows(['tk_a', 'tk_b', 'tk_c']);
    expect(queries).toBe(2);
    await store.upsert('tokens', ['tk_a', 'tk_b', 'tk_c'].map((id) => row(id, 'dead', 2)));
    now = 5_000;
    const rows = await directory.rows(['tk_a', 'tk_b', 'tk_c']);
    expect([...rows.values()].map((r) => r.status)).toEqual(['dead', 'dead', 'dead']);
    expect(queries).toBe(3);
  });

  it('shares one read among requests arriving together for tokens not held yet', async () => {
    await store.upsert('tokens', ['tk_a', 'tk_b'].map((id) => row(id, 'active', 1)));
    const answers = await Promise.all([directory.rows(['tk_a', 'tk_b']), directory.rows(['tk_b']), directory.rows(['tk_a', 'tk_x'])]);
    expect(answers.map((rows) => [...rows.keys()])).toEqual([['tk_a', 'tk_b'], ['tk_b'], ['tk_a']]);
    expect(queries).toBe(1);
  });

  it('reads the misses that come while a read runs together in the next read', async () => {
    await store.upsert('tokens', ['tk_a', 'tk_b', 'tk_c', 'tk_d'].map((id) => row(id, 'active', 1)));
    const reads: string[][] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held = {
      // The first read waits until released: a store busy with a catch-up.
      query: (async (statement: Parameters<typeof store.query>[0]) => {
        reads.push(['tk_a', 'tk_b', 'tk_c', 'tk_d'].filter((id) => statement.render('duckdb').includes(`'${id}'`)));
        if (reads.length === 1) await released;
        return store.query(statement);
      }) as typeof store.query,
    };
    const slow = new TokenDirectory({ store: held, now: () => now, ttlMs: 5_000 });
    const first = slow.rows(['tk_a']);
    await waitFor(async () => reads.length === 1, 'the first read to begin');
    const later = [slow.rows(['tk_b']), slow.rows(['tk_c', 'tk_a']), slow.rows(['tk_d'])];
    release();
    const answers = await Promise.all([first, ...later]);
    expect(answers.map((rows) => [...rows.keys()].sort())).toEqual([['tk_a'], ['tk_b'], ['tk_a', 'tk_c'], ['tk_d']]);
    expect(reads).toEqual([['tk_a'], ['tk_b', 'tk_c', 'tk_d']]);
  });
});
