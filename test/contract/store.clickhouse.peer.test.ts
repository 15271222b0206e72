import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
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

async function dropDatabase(database: string): Promise<void> {
  const response = await fetch(serverUrl(), { method: 'POST', body: `DROP DATABASE IF EXISTS "${database}"` });
  if (!response.ok) throw new Error(`DROP DATABASE ${database} failed: ${await response.text()}`);
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
