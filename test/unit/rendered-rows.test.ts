import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RenderedRows } from '../../api/services/rendered-rows.ts';
import { TokenDirectory } from '../../api/services/token-directory.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import { alphaToken } from '../helpers/quant-snapshot.ts';

/** Listing rows rendered once per row and token metadata, as the routes send them. */
describe('RenderedRows', () => {
  let store: DuckDbStore<typeof PROJECTION_TABLES>;
  let clock: number;
  let presented: string[];
  let rows: RenderedRows<{ tokenId: string; scoreValue: number }>;

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    clock = 0;
    presented = [];
    const directory = new TokenDirectory({ store, now: () => clock, ttlMs: 1_000 });
    rows = new RenderedRows({
      present: (row, tokens) => {
        presented.push(row.tokenId);
        return { scoreValue: row.scoreValue, tokenName: tokens.get(row.tokenId)?.name ?? null };
      },
      tokenIdOf: (row) => row.tokenId,
      directory,
    });
    await store.upsert('tokens', [alphaToken(1)]);
  });

  afterEach(async () => {
    await store.close();
  });

  it('renders each row in wire form once while the row and its token metadata stay the same objects', async () => {
    const a = { tokenId: 'tk_a', scoreValue: 1 };
    const unknown = { tokenId: 'tk_z', scoreValue: 2 };
    expect((await rows.render([a, unknown])).text).toBe('[{"score_value":1,"token_name":"Alpha"},{"score_value":2,"token_name":null}]');
    expect((await rows.render([unknown, a])).text).toBe('[{"score_value":2,"token_name":null},{"score_value":1,"token_name":"Alpha"}]');
    expect(presented).toEqual(['tk_a', 'tk_z']);

    // Another object for the same row is rendered anew; so is every row once the metadata is read again.
    await rows.render([{ ...a }]);
    expect(presented).toEqual(['tk_a', 'tk_z', 'tk_a']);
    await store.upsert('tokens', [{ ...alphaToken(2), name: 'Alpha Two' }]);
    clock = 1_000;
    expect((await rows.render([a])).text).toBe('[{"score_value":1,"token_name":"Alpha Two"}]');
    expect(presented).toEqual(['tk_a', 'tk_z', 'tk_a', 'tk_a']);
  });

  it('renders no rows as an empty array', async () => {
    expect((await rows.render([])).text).toBe('[]');
  });
});
