import { pino } from 'pino';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import { describeAsOfReadModelContract } from './read-models-as-of.contract.ts';
import { describeQuantReadModelContract } from './read-models-quant.contract.ts';
import { describeReadModelsSocialContract } from './read-models-social.contract.ts';
import { describeResearchRunsContract } from './research-runs.contract.ts';

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

describeQuantReadModelContract('duckdb', openDuckDb);
describeReadModelsSocialContract('duckdb', openDuckDb);
describeAsOfReadModelContract('duckdb', openDuckDb);
describeResearchRunsContract('duckdb', openDuckDb);
