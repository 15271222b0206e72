import { MessageChannel } from 'node:worker_threads';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { StoreError } from '../../infra/store/errors.ts';
import { jsonText } from '../../infra/store/json-text.ts';
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

  async function served({ writable = false } = {}) {
    const store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    const { port1, port2 } = new MessageChannel();
    serveStore(store, port2, { writable });
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

  const records = sql`SELECT token_id, ts, version, snapshot FROM snapshot_records ORDER BY ts`;
  const record = (ts: number, version = 1) => ({ token_id: 'tk_a', ts, version, snapshot: jsonText({ ts, version }) });

  it('writes through a writable port: newest version per key, as the store itself does', async () => {
    const { store, remote } = await served({ writable: true });
    await remote.upsert('snapshot_records', [record(1), record(2, 2)]);
    await remote.upsert('snapshot_records', [record(2, 1)]);
    expect(await store.query(records)).toEqual([record(1), record(2, 2)]);
  });

  it('validates rows on the writing side: a row its table refuses is never sent', async () => {
    const { store, remote } = await served({ writable: true });
    const notJson = { ...record(1), snapshot: '{"ts":' };
    await expect(remote.upsert('snapshot_records', [record(2), notJson])).rejects.toMatchObject({ code: 'STORE_INVALID_VALUE' });
    expect(await store.query(records)).toEqual([]);
  });

  it('refuses writes on a read-only port: only the projections write the store', async () => {
    const { store, remote } = await served();
    await expect(remote.upsert('snapshot_records', [record(1)])).rejects.toThrow(/read-only/);
    expect(await store.query(records)).toEqual([]);
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
