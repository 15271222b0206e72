import { MessageChannel } from 'node:worker_threads';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { StoreError } from '../../infra/store/errors.ts';
import { RemoteStore } from '../../infra/store/remote/remote-store.ts';
import { serveStore } from '../../infra/store/remote/store-host.ts';
import { sql } from '../../infra/store/sql-literal.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';

describe('a store read through a message port', () => {
  const closers: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function served() {
    const store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    const { port1, port2 } = new MessageChannel();
    serveStore(store, port2);
    const remote = new RemoteStore(port1, PROJECTION_TABLES);
    closers.push(() => store.close(), () => port2.close(), () => remote.close());
    return { store, remote, port2 };
  }

  it('answers what the store answers, typed values included', async () => {
    const { store, remote } = await served();
    const statement = sql`SELECT 1 = 1 AS yes, ${'a\u0000b'} AS text, ${[1, 2]} AS list, 9007199254740991 AS big`;
    expect(await remote.query(statement, { types: { yes: 'bool' } })).toEqual(await store.query(statement, { types: { yes: 'bool' } }));
    expect(await remote.appliedMigrations()).toEqual(await store.appliedMigrations());
    expect(await remote.ping()).toBe(true);
  });

  it('rejects with the store error of the serving side, code and all', async () => {
    const { remote } = await served();
    const failed = await remote.query(sql`SELECT * FROM no_such_table`).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(StoreError);
    expect((failed as StoreError).code).toBe('STORE_QUERY_FAILED');
    expect((failed as StoreError).message).toMatch(/no_such_table/);
  });

  it('refuses writes: only the thread that holds the store writes it', async () => {
    const { remote } = await served();
    await expect(remote.upsert()).rejects.toThrow(/read-only/);
  });

  it('fails what is in flight when the serving side goes away, and everything after', async () => {
    const { remote, port2 } = await served();
    const inFlight = remote.query(sql`SELECT count(*) AS n FROM range(100000000)`);
    port2.close();
    await expect(inFlight).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    await expect(remote.query(sql`SELECT 1`)).rejects.toMatchObject({ code: 'STORE_CLOSED' });
    expect(await remote.ping()).toBe(false);
  });
});
