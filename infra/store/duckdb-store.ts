import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection, type JS } from '@duckdb/node-api';
import { EventLoopTurns } from '../event-loop/turns.ts';
import type { Logger } from '../logging.ts';
import { StoreError } from './errors.ts';
import {
  assertNoMismatches,
  assertUnchanged,
  loadMigrations,
  schemaMismatches,
  type LiveColumn,
} from './migrations.ts';
import { resultTypesOf, type AnalyticalStore, type AppliedMigration, type MigrationResult, type QueryOptions, type ResultValue, type Row } from './port.ts';
import { quoteIdentifier, sql, type Sql } from './sql-literal.ts';
import { naturalKey, tableOf, validateRows, type Column, type LogicalType, type RowOf, type TableDef, type TableRegistry } from './table.ts';

export interface DuckDbStoreOptions<T extends TableRegistry> {
  /** The database file, `<dataDir>/store.duckdb` in the embedded mode, or ':memory:'. */
  path: string;
  tables: T;
  /** This store's migration files (projections/migrations/index.ts: migrationsDir('duckdb')). */
  migrationsDir: string;
  logger: Logger;
  /** Connections serving queries side by side; writes use one more of their own. */
  readConnections?: number;
  /** DuckDB's memory_limit (`512MiB`); DuckDB's default is 80% of the machine's memory. */
  memoryLimit?: string;
  /** DuckDB's checkpoint_threshold: write-ahead log gathered before a checkpoint (DuckDB's default 16MiB). */
  checkpointThreshold?: string;
}

const PHYSICAL: Readonly<Record<Column['type'], string>> = {
  string: 'VARCHAR',
  json: 'VARCHAR',
  int64: 'BIGINT',
  float64: 'DOUBLE',
  bool: 'BOOLEAN',
};

/**
 * The embedded mode's store: DuckDB in this process. An upsert appends the batch (newest
 * row per key) into a connection-local staging table with DuckDB's Appender, then moves it
 * with one INSERT ... SELECT ... ON CONFLICT (key) DO UPDATE ... WHERE excluded.version >=
 * version, so an older version never overwrites a newer one and a repeated batch rewrites
 * identical rows. A table without a key index gets MERGE INTO on the key instead, to the same
 * effect: this one writer is all that changes the tables, so no row comes between its join and
 * its insert. The Appender also carries NUL bytes, which SQL text cannot (sql-literal.ts).
 * Writes run one at a time on their own connection; reads share a small connection pool.
 */
export class DuckDbStore<T extends TableRegistry> implements AnalyticalStore<T> {
  readonly tables: T;
  private closed = false;
  private writeChain: Promise<unknown> = Promise.resolve();
  private readonly idle: DuckDBConnection[] = [];
  private readonly waiting: ((conn: DuckDBConnection) => void)[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private readConnectionCount = 0;
  /** The health probe's own connection: a probe queued behind the reads would call a busy store down. */
  private probe: Promise<DuckDBConnection> | null = null;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
    private readonly options: DuckDbStoreOptions<T>,
  ) {
    this.tables = options.tables;
  }

  static async open<T extends TableRegistry>(options: DuckDbStoreOptions<T>): Promise<DuckDbStore<T>> {
    const settings: Record<string, string> = {};
    if (options.memoryLimit) settings.memory_limit = options.memoryLimit;
    if (options.checkpointThreshold) settings.checkpoint_threshold = options.checkpointThreshold;
    const instance = await DuckDBInstance.create(options.path, settings);
    try {
      return new DuckDbStore(instance, await instance.connect(), options);
    } catch (err) {
      instance.closeSync();
      throw err;
    }
  }

  async migrate(): Promise<MigrationResult> {
    this.assertOpen();
    const migrations = await loadMigrations(this.options.migrationsDir, 'duckdb');
    return this.exclusive(async () => {
      await this.run(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, checksum VARCHAR NOT NULL, applied_at BIGINT NOT NULL)',
      );
      const applied = new Map((await this.readApplied(this.writer)).map((m) => [m.version, m]));
      const result: MigrationResult = { applied: [] };
      for (const migration of migrations) {
        const done = applied.get(migration.version);
        if (done) {
          assertUnchanged(migration, done.checksum);
          continue;
        }
        // DuckDB's DDL is transactional: a migration applies completely or not at all.
        await this.run('BEGIN TRANSACTION');
        try {
          for (const statement of migration.statements) await this.run(statement);
          await this.run(
            sql`INSERT INTO schema_migrations VALUES (${migration.version}, ${migration.name}, ${migration.checksum}, ${Date.now()})`.render(
              'duckdb',
            ),
          );
          await this.run('COMMIT');
        } catch (err) {
          await this.run('ROLLBACK');
          throw err;
        }
        this.options.logger.info({ migration: migration.name }, 'applied store migration');
        result.applied.push(migration.name);
      }
      await this.verifySchema();
      return result;
    });
  }

  async appliedMigrations(): Promise<AppliedMigration[]> {
    this.assertOpen();
    return this.withReader((conn) => this.readApplied(conn));
  }

  async upsert<N extends keyof T & string>(table: N, rows: readonly RowOf<T[N]>[]): Promise<void> {
    const def = tableOf(this.tables, table);
    validateRows(def, rows);
    this.assertOpen();
    if (rows.length === 0) return;
    const batch = newestPerKey(def, rows as readonly Record<string, unknown>[]);
    await this.exclusive(async () => {
      const stage = await this.stagingTable(def);
      let appender: DuckDBAppender | undefined;
      try {
        appender = await this.writer.createAppender(stage, null, 'temp');
        // Appending runs on this thread; reads asked meanwhile are answered in its turns.
        const turns = new EventLoopTurns();
        for (const row of batch) {
          appendRow(appender, def, row);
          const turn = turns.due();
          if (turn) await turn;
        }
      } catch (err) {
        throw wrap(err);
      } finally {
        // Closing flushes the appended rows into the staging table.
        appender?.closeSync();
      }
      await this.run(upsertStatement(def, stage));
    });
  }

  async query<R extends Row = Row>(statement: Sql, options?: QueryOptions): Promise<R[]> {
    return this.queryText(statement.render('duckdb'), resultTypesOf(statement, options));
  }

  /** A statement rendered already (by a RemoteStore of another thread); `types` as QueryOptions'. */
  async queryText<R extends Row = Row>(text: string, types: Readonly<Record<string, LogicalType>>): Promise<R[]> {
    this.assertOpen();
    return this.withReader(async (conn) => {
      return (await readRows(conn, text)).map((raw) => {
        const row: Row = {};
        for (const [name, value] of Object.entries(raw)) row[name] = toResult(value, name, types[name] === 'bool');
        return row as R;
      });
    });
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      this.probe ??= this.instance.connect();
      await this.tracked(this.probe.then((conn) => readRows(conn, 'SELECT 1')));
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writeChain.catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    for (const conn of this.idle) conn.closeSync();
    if (this.probe) (await this.probe.catch(() => null))?.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'the DuckDB store is closed');
  }

  /** Runs write work one task at a time on the write connection. */
  private exclusive<R>(task: () => Promise<R>): Promise<R> {
    const result = this.writeChain.then(task);
    this.writeChain = result.catch(() => undefined);
    return result;
  }

  private async withReader<R>(task: (conn: DuckDBConnection) => Promise<R>): Promise<R> {
    const conn = await this.acquireReader();
    try {
      return await this.tracked(task(conn));
    } finally {
      this.releaseReader(conn);
    }
  }

  /** Work that close() waits for before it closes the connections. */
  private async tracked<R>(work: Promise<R>): Promise<R> {
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  private async acquireReader(): Promise<DuckDBConnection> {
    const free = this.idle.pop();
    if (free) return free;
    if (this.readConnectionCount < (this.options.readConnections ?? 4)) {
      this.readConnectionCount++;
      return this.instance.connect();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private releaseReader(conn: DuckDBConnection): void {
    const next = this.waiting.shift();
    if (next) next(conn);
    else if (this.closed) conn.closeSync();
    else this.idle.push(conn);
  }

  private async run(text: string): Promise<void> {
    try {
      await this.writer.run(text);
    } catch (err) {
      throw wrap(err);
    }
  }

  private async readApplied(conn: DuckDBConnection): Promise<AppliedMigration[]> {
    const [exists] = await readRows(
      conn,
      "SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'main' AND table_name = 'schema_migrations'",
    );
    if (Number(exists.n) === 0) return [];
    const rows = await readRows(conn, 'SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version');
    return rows.map((r) => ({
      version: Number(r.version),
      name: String(r.name),
      checksum: String(r.checksum),
      appliedAt: Number(r.applied_at),
    }));
  }

  /**
   * The connection-local staging table of `def`, made anew for each batch with the table's
   * columns: rows deleted from a temporary table keep their memory (it is never checkpointed),
   * so a staging table emptied by DELETE grows with every row it ever held.
   */
  private async stagingTable(def: TableDef): Promise<string> {
    const stage = `_stage_${def.name}`;
    await this.run(`CREATE OR REPLACE TEMP TABLE ${quoteIdentifier(stage)} AS SELECT * FROM ${quoteIdentifier(def.name)} LIMIT 0`);
    return stage;
  }

  private async verifySchema(): Promise<void> {
    const columns = await readRows(
      this.writer,
      "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns WHERE table_schema = 'main' ORDER BY table_name, ordinal_position",
    );
    const keys = await readRows(
      this.writer,
      "SELECT table_name, constraint_column_names AS cols FROM duckdb_constraints() WHERE schema_name = 'main' AND constraint_type = 'PRIMARY KEY'",
    );
    const live = new Map<string, LiveColumn[]>();
    for (const r of columns) {
      const type = String(r.data_type) + (r.is_nullable === 'NO' ? ' NOT NULL' : '');
      live.set(String(r.table_name), [...(live.get(String(r.table_name)) ?? []), { name: String(r.column_name), type }]);
    }
    const primaryKeys = new Map(keys.map((r) => [String(r.table_name), (r.cols as string[]).join(', ')]));
    const problems: string[] = [];
    for (const def of Object.values(this.tables)) {
      const mismatches = schemaMismatches(def, live.get(def.name) ?? [], (c) => PHYSICAL[c.type] + (c.nullable ? '' : ' NOT NULL'));
      problems.push(...mismatches);
      const wanted = def.keyIndex ? def.key.join(', ') : undefined;
      if (mismatches.length === 0 && primaryKeys.get(def.name) !== wanted) {
        const has = `has (${primaryKeys.get(def.name) ?? 'none'})`;
        problems.push(wanted ? `table ${def.name} needs PRIMARY KEY (${wanted}), ${has}` : `table ${def.name} must have no PRIMARY KEY, ${has}`);
      }
    }
    assertNoMismatches(problems);
  }
}

/** Keeps, per natural key, the row with the highest version (the later one on a tie). */
function newestPerKey(def: TableDef, rows: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const newest = new Map<string, Record<string, unknown>>();
  for (const row of rows) {
    const key = naturalKey(def, row);
    const seen = newest.get(key);
    if (!seen || (row[def.version] as number) >= (seen[def.version] as number)) newest.set(key, row);
  }
  return [...newest.values()];
}

function appendRow(appender: DuckDBAppender, def: TableDef, row: Record<string, unknown>): void {
  for (const col of def.columns) {
    const value = row[col.name];
    if (value === null) appender.appendNull();
    else if (col.type === 'int64') appender.appendBigInt(BigInt(value as number));
    else if (col.type === 'float64') appender.appendDouble(value as number);
    else if (col.type === 'bool') appender.appendBoolean(value as boolean);
    else appender.appendVarchar(value as string);
  }
  appender.endRow();
}

function upsertStatement(def: TableDef, stage: string): string {
  const target = quoteIdentifier(def.name);
  const source = `temp.${quoteIdentifier(stage)}`;
  const all = def.columns.map((c) => quoteIdentifier(c.name)).join(', ');
  const values = def.columns.filter((c) => !def.key.includes(c.name)).map((c) => quoteIdentifier(c.name));
  const version = quoteIdentifier(def.version);
  if (!def.keyIndex) {
    // No index to conflict on: a join of the batch (one row per key) with the table.
    const on = def.key.map((k) => `${target}.${quoteIdentifier(k)} = ${source}.${quoteIdentifier(k)}`).join(' AND ');
    return (
      `MERGE INTO ${target} USING ${source} ON ${on} ` +
      `WHEN MATCHED AND ${source}.${version} >= ${target}.${version} THEN UPDATE SET ${values.map((v) => `${v} = ${source}.${v}`).join(', ')} ` +
      `WHEN NOT MATCHED THEN INSERT (${all}) VALUES (${def.columns.map((c) => `${source}.${quoteIdentifier(c.name)}`).join(', ')})`
    );
  }
  return (
    `INSERT INTO ${target} (${all}) SELECT ${all} FROM ${source} ` +
    `ON CONFLICT (${def.key.map(quoteIdentifier).join(', ')}) DO UPDATE SET ${values.map((v) => `${v} = excluded.${v}`).join(', ')} ` +
    `WHERE excluded.${version} >= ${target}.${version}`
  );
}

function toResult(value: unknown, column: string, asBool: boolean): ResultValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return asBool ? value !== 0 : value;
  if (typeof value === 'bigint') {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
      throw new StoreError('STORE_UNREPRESENTABLE_RESULT', `column ${column}: ${value} is beyond 2^53`);
    }
    return asBool ? value !== 0n : Number(value);
  }
  if (Array.isArray(value)) return value.map((v) => toResult(v, column, false));
  throw new StoreError(
    'STORE_UNREPRESENTABLE_RESULT',
    `column ${column}: ${Object.prototype.toString.call(value)} values are not supported; select epoch-ms integers, numbers or text`,
  );
}

async function readRows(conn: DuckDBConnection, text: string): Promise<Record<string, JS>[]> {
  try {
    return (await conn.runAndReadAll(text)).getRowObjectsJS();
  } catch (err) {
    throw wrap(err);
  }
}

function wrap(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StoreError('STORE_QUERY_FAILED', `DuckDB: ${message}`, false, { cause: err });
}
