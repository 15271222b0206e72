import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { columns, sql, table } from '../../infra/store/sql-literal.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES, tokens } from '../../projections/tables.ts';
import { describeStoreContract } from './store.contract.ts';

const logger = pino({ level: 'silent' });

describeStoreContract('duckdb', async (tables, dir) => {
  const store = await DuckDbStore.open({
    path: ':memory:',
    tables,
    migrationsDir: dir ?? migrationsDir('duckdb'),
    logger,
  });
  return { store, cleanup: () => store.close() };
});

describe('DuckDbStore on a file', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('keeps rows and applied migrations across reopening', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-duckdb-'));
    dirs.push(dir);
    const options = { path: join(dir, 'store.duckdb'), tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger };
    const row = {
      token_id: 'tk_a',
      ts: 1_700_000_000_000,
      symbol: 'A',
      name: 'nul\u0000 and \'quotes\'',
      chain: 'base',
      address: '0x1111111111111111111111111111111111111111',
      logo_url: null,
      status: 'active',
      narrative: 'memes',
      source_url: null,
    };

    const first = await DuckDbStore.open(options);
    await first.migrate();
    await first.upsert('tokens', [row]);
    await first.close();

    const second = await DuckDbStore.open(options);
    try {
      expect((await second.migrate()).applied).toEqual([]);
      expect(await second.query(sql`SELECT ${columns(tokens)} FROM ${table(tokens)}`)).toEqual([row]);
    } finally {
      await second.close();
    }
  });
});
