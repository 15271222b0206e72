import { pino } from 'pino';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import { describeResearchRunsContract } from './research-runs.contract.ts';

describeResearchRunsContract('duckdb', async () => {
  const store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
  await store.migrate();
  return { store, cleanup: () => store.close() };
});
