import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { ClickHouseStore } from '../../infra/store/clickhouse-store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import { startClickHouseServer, type ClickHouseServer } from '../helpers/clickhouse-server.ts';
import { describeResearchContract } from './research.contract.ts';

let server: ClickHouseServer | undefined;

beforeAll(async () => {
  server = await startClickHouseServer();
});

afterAll(async () => {
  await server?.stop();
});

describeResearchContract('clickhouse', async () => {
  if (!server) throw new Error('the ClickHouse server did not start');
  const url = server.url;
  const database = `research_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const store = new ClickHouseStore({ url, database, tables: PROJECTION_TABLES, migrationsDir: migrationsDir('clickhouse'), logger: pino({ level: 'silent' }) });
  await store.migrate();
  return {
    store,
    cleanup: async () => {
      await store.close();
      const response = await fetch(url, { method: 'POST', body: `DROP DATABASE IF EXISTS "${database}"` });
      if (!response.ok) throw new Error(`DROP DATABASE ${database} failed: ${await response.text()}`);
    },
  };
});
