import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { ClickHouseStore } from '../../infra/store/clickhouse-store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import { startClickHouseServer, type ClickHouseServer } from '../../infra/peers/clickhouse-server.ts';
import { describeAsOfReadModelContract } from './read-models-as-of.contract.ts';
import { describeQuantReadModelContract } from './read-models-quant.contract.ts';
import { describeReadModelsSocialContract } from './read-models-social.contract.ts';
import { describeResearchRunsContract } from './research-runs.contract.ts';
import { describeResearchContract } from './research.contract.ts';
import { memoryReads } from './served-reads.ts';

let server: ClickHouseServer | undefined;

beforeAll(async () => {
  server = await startClickHouseServer();
});

afterAll(async () => {
  await server?.stop();
});

/** Each store gets a database of its own on the one server, dropped afterwards. */
async function openClickHouse() {
  if (!server) throw new Error('the ClickHouse server did not start');
  const url = server.url;
  const database = `rm_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  const store = new ClickHouseStore({
    url,
    database,
    tables: PROJECTION_TABLES,
    migrationsDir: migrationsDir('clickhouse'),
    logger: pino({ level: 'silent' }),
  });
  await store.migrate();
  return {
    store,
    cleanup: async () => {
      await store.close();
      const response = await fetch(url, { method: 'POST', body: `DROP DATABASE IF EXISTS "${database}"` });
      if (!response.ok) throw new Error(`DROP DATABASE ${database} failed: ${await response.text()}`);
    },
  };
}

describeQuantReadModelContract('clickhouse', openClickHouse);
describeReadModelsSocialContract('clickhouse', openClickHouse);
describeAsOfReadModelContract('clickhouse', openClickHouse);
describeResearchRunsContract('clickhouse', openClickHouse);
describeResearchContract('clickhouse', openClickHouse);

/** The reads the API holds in memory, kept from ClickHouse. */
async function openClickHouseServedFromMemory() {
  const opened = await openClickHouse();
  return { ...opened, served: memoryReads(opened.store) };
}

describeQuantReadModelContract('clickhouse served from memory', openClickHouseServedFromMemory);
describeReadModelsSocialContract('clickhouse served from memory', openClickHouseServedFromMemory);
describeAsOfReadModelContract('clickhouse served from memory', openClickHouseServedFromMemory);
