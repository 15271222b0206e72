import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClickHouseStore } from '../../infra/store/clickhouse-store.ts';
import { StoreError } from '../../infra/store/errors.ts';
import { sql } from '../../infra/store/sql-literal.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import { startClickHouseServer, type ClickHouseServer } from '../../infra/peers/clickhouse-server.ts';
import { describeCheckpointContract } from './checkpoints.contract.ts';
import { describeStoreContract, type StoreFactory } from './store.contract.ts';

const logger = pino({ level: 'silent' });
let server: ClickHouseServer | undefined;

beforeAll(async () => {
  server = await startClickHouseServer();
});

afterAll(async () => {
  await server?.stop();
});

function serverUrl(): string {
  if (!server) throw new Error('the ClickHouse server did not start');
  return server.url;
}

async function runOnServer(statement: string): Promise<void> {
  const response = await fetch(serverUrl(), { method: 'POST', body: statement });
  if (!response.ok) throw new Error(`${statement} failed: ${await response.text()}`);
}

async function dropDatabase(database: string): Promise<void> {
  await runOnServer(`DROP DATABASE IF EXISTS "${database}"`);
}

// Each store gets its own database on the one server, so tests cannot see each other's rows.
const storeInOwnDatabase: StoreFactory = async (tables, dir) => {
  const database = `contract_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const store = new ClickHouseStore({
    url: serverUrl(),
    database,
    tables,
    migrationsDir: dir ?? migrationsDir('clickhouse'),
    logger,
  });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await dropDatabase(database);
    },
  };
};

describeStoreContract('clickhouse', storeInOwnDatabase);
describeCheckpointContract('clickhouse', storeInOwnDatabase);

describe('ClickHouse migrations run by several processes', () => {
  const databases: string[] = [];
  const storeOn = (database: string, dir = migrationsDir('clickhouse')) =>
    new ClickHouseStore({ url: serverUrl(), database, tables: PROJECTION_TABLES, migrationsDir: dir, logger });
  const newDatabase = (): string => {
    databases.push(`migrate_${randomUUID().replaceAll('-', '').slice(0, 16)}`);
    return databases.at(-1)!;
  };

  afterAll(async () => {
    for (const database of databases) await dropDatabase(database);
  });

  it('lets two stores migrate a new database at the same moment, as roles starting together do', async () => {
    const shipped = readdirSync(migrationsDir('clickhouse')).filter((f) => f.endsWith('.sql')).length;
    for (let round = 0; round < 3; round++) {
      const database = newDatabase();
      const [a, b] = [storeOn(database), storeOn(database)];
      try {
        const results = await Promise.all([a.migrate(), b.migrate()]);
        // Each migration is applied by at least one of them, and recorded once.
        expect(new Set(results.flatMap((r) => r.applied)).size).toBe(shipped);
        expect(await a.appliedMigrations()).toHaveLength(shipped);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    }
  });

  it('takes an ADD COLUMN whose column is there, added by a run that stopped before recording it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-migrations-'));
    const database = newDatabase();
    const store = new ClickHouseStore({ url: serverUrl(), database, tables: {}, migrationsDir: dir, logger });
    try {
      await writeFile(join(dir, '0001_first.sql'), 'CREATE TABLE IF NOT EXISTS notes (id String) ENGINE = MergeTree ORDER BY id;\n');
      expect((await store.migrate()).applied).toEqual(['0001_first']);
      await runOnServer(`ALTER TABLE "${database}".notes ADD COLUMN body Nullable(String)`);
      await writeFile(join(dir, '0002_body.sql'), 'ALTER TABLE notes ADD COLUMN body Nullable(String);\n');
      expect((await store.migrate()).applied).toEqual(['0002_body']);
      // Any other failure of the statement still stops the migration.
      await writeFile(join(dir, '0003_broken.sql'), 'ALTER TABLE missing_table ADD COLUMN body Nullable(String);\n');
      expect(await store.migrate().catch((e: unknown) => e)).toMatchObject({ code: 'STORE_QUERY_FAILED' });
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('ClickHouseStore without a server', () => {
  it('reports an unreachable server as a retryable STORE_UNAVAILABLE and pings false', async () => {
    const store = new ClickHouseStore({
      url: `http://127.0.0.1:${await closedPort()}`,
      database: 'tqa',
      tables: PROJECTION_TABLES,
      migrationsDir: migrationsDir('clickhouse'),
      logger,
      requestTimeoutMs: 2_000,
    });
    try {
      expect(await store.ping()).toBe(false);
      const row = {
        token_id: 'tk_a',
        ts: 1_700_000_000_000,
        version: 1,
        price_usd: null,
        momentum: null,
        crowding: null,
        has_market_data: false,
        features: '{}',
      };
      const attempts = [() => store.migrate(), () => store.upsert('snapshots', [row]), () => store.query(sql`SELECT 1 AS one`)];
      for (const attempt of attempts) {
        const err: unknown = await attempt().then(
          () => 'resolved',
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(StoreError);
        expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
      }
    } finally {
      await store.close();
    }
  });
});

/** A loopback port nothing listens on: bound once by us, then released. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
