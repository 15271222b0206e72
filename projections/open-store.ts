import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { migrationsDir } from './migrations/index.ts';
import { STORE_TABLES, type ProjectionTables } from './tables.ts';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/logging.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';

/** Where a store lives when it is not the configured one (replay builds a fresh store beside it). */
export interface StoreTarget {
  /** DuckDB file; `<TQA_DATA_DIR>/store.duckdb` by default. */
  duckdbPath?: string;
  /** ClickHouse database, created when missing; CLICKHOUSE_DATABASE by default. */
  clickhouseDatabase?: string;
}

export function defaultDuckDbPath(config: Config): string {
  return join(config.TQA_DATA_DIR, 'store.duckdb');
}

/** Opens the store of the configured mode (TQA_STORE) over every table (STORE_TABLES) and migrates it. */
export async function openStore(
  config: Config,
  logger: Logger,
  target: StoreTarget = {},
): Promise<AnalyticalStore<ProjectionTables>> {
  const storeLogger = logger.child({ component: 'store' });
  let store: AnalyticalStore<ProjectionTables>;
  if (config.TQA_STORE === 'duckdb') {
    const path = target.duckdbPath ?? defaultDuckDbPath(config);
    await mkdir(dirname(path), { recursive: true });
    const { DuckDbStore } = await import('../infra/store/duckdb-store.ts');
    store = await DuckDbStore.open({
      path,
      tables: STORE_TABLES,
      migrationsDir: migrationsDir('duckdb'),
      logger: storeLogger,
      memoryLimit: config.TQA_DUCKDB_MEMORY_LIMIT,
      checkpointThreshold: config.TQA_DUCKDB_CHECKPOINT_THRESHOLD,
    });
  } else {
    const { ClickHouseStore } = await import('../infra/store/clickhouse-store.ts');
    store = new ClickHouseStore({
      url: config.CLICKHOUSE_URL,
      database: target.clickhouseDatabase ?? config.CLICKHOUSE_DATABASE,
      tables: STORE_TABLES,
      migrationsDir: migrationsDir('clickhouse'),
      logger: storeLogger,
    });
  }
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/**
 * True when another process has the DuckDB file open (DuckDB holds a lock on it). Call it
 * only from a process that does not have the file open itself: the probe's own open and
 * close would release that process's lock.
 */
export async function duckDbFileInUse(path: string): Promise<boolean> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  try {
    (await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' })).closeSync();
    return false;
  } catch (err) {
    if (/Could not set lock|Conflicting lock/i.test((err as Error).message)) return true;
    throw err;
  }
}
