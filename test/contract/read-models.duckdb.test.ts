import { MessageChannel } from 'node:worker_threads';
import { pino } from 'pino';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { RemoteStore } from '../../infra/store/remote/remote-store.ts';
import { serveStore } from '../../infra/store/remote/store-host.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES, type ProjectionTables } from '../../projections/tables.ts';
import { describeAsOfReadModelContract } from './read-models-as-of.contract.ts';
import { describeQuantReadModelContract } from './read-models-quant.contract.ts';
import { describeReadModelsSocialContract } from './read-models-social.contract.ts';
import { describeResearchRunsContract } from './research-runs.contract.ts';
import { memoryReads } from './served-reads.ts';

async function openDuckDb() {
  const store = await DuckDbStore.open({
    path: ':memory:',
    tables: PROJECTION_TABLES,
    migrationsDir: migrationsDir('duckdb'),
    logger: pino({ level: 'silent' }),
  });
  await store.migrate();
  return { store, cleanup: () => store.close() };
}

/**
 * The same store as `tqa start` gives the API: written where the projections run, read
 * through a RemoteStore, every statement and result crossing a message port.
 */
async function openDuckDbReadThroughPort() {
  const { store, cleanup } = await openDuckDb();
  const { port1, port2 } = new MessageChannel();
  serveStore(store, port2);
  const remote = new RemoteStore(port1, PROJECTION_TABLES);
  const split: AnalyticalStore<ProjectionTables> = {
    tables: PROJECTION_TABLES,
    migrate: () => store.migrate(),
    upsert: (table, rows) => store.upsert(table, rows),
    query: (statement, options) => remote.query(statement, options),
    appliedMigrations: () => remote.appliedMigrations(),
    ping: () => remote.ping(),
    close: () => remote.close(),
  };
  return {
    store: split,
    cleanup: async () => {
      await remote.close();
      port2.close();
      await cleanup();
    },
  };
}

for (const [name, open] of [
  ['duckdb', openDuckDb],
  ['duckdb read through a port', openDuckDbReadThroughPort],
] as const) {
  describeQuantReadModelContract(name, open);
  describeReadModelsSocialContract(name, open);
  describeAsOfReadModelContract(name, open);
  describeResearchRunsContract(name, open);
}

/** As `tqa start` serves the reads the API holds in memory: those kept from the store read through a port. */
async function openDuckDbServedFromMemory() {
  const opened = await openDuckDbReadThroughPort();
  return { ...opened, served: memoryReads(opened.store) };
}

describeQuantReadModelContract('duckdb served from memory', openDuckDbServedFromMemory);
describeReadModelsSocialContract('duckdb served from memory', openDuckDbServedFromMemory);
describeAsOfReadModelContract('duckdb served from memory', openDuckDbServedFromMemory);
