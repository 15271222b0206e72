import { Readable } from 'node:stream';
import {
  ClickHouseError,
  createClient,
  drainStream,
  type ClickHouseClient,
  type ErrorLogParams,
  type Logger as ClientLogger,
  type LogParams,
  type WarnLogParams,
} from '@clickhouse/client';
import type { Logger } from '../logging.ts';
import { encodeRowBinary } from './clickhouse-row-binary.ts';
import { StoreError } from './errors.ts';
import { assertNoMismatches, assertUnchanged, loadMigrations, schemaMismatches, type LiveColumn } from './migrations.ts';
import { resultTypesOf, type AnalyticalStore, type AppliedMigration, type MigrationResult, type QueryOptions, type ResultValue, type Row } from './port.ts';
import { quoteIdentifier, sql, type Sql } from './sql-literal.ts';
import { tableOf, validateRows, type Column, type RowOf, type TableRegistry } from './table.ts';

export interface ClickHouseStoreOptions<T extends TableRegistry> {
  /** HTTP interface, e.g. http://localhost:8123. */
  url: string;
  /** Created by migrate() when missing. */
  database: string;
  username?: string;
  password?: string;
  tables: T;
  /** This store's migration files (projections/migrations/index.ts: migrationsDir('clickhouse')). */
  migrationsDir: string;
  logger: Logger;
  /** Per request; a request over it fails as STORE_UNAVAILABLE (retryable). */
  requestTimeoutMs?: number;
}

const PHYSICAL: Readonly<Record<Column['type'], string>> = {
  string: 'String',
  json: 'String',
  int64: 'Int64',
  float64: 'Float64',
  // 18.16 has no Bool type.
  bool: 'UInt8',
};

const DATABASE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Settings sent with every read. 18.16 refuses settings it does not know (Code 115), so
 * only ones it has are sent. Int64s come quoted so digits beyond 2^53 are detected, not lost.
 */
const READ_SETTINGS = { output_format_json_quote_64bit_integers: 1 } as const;

/** Node socket errors that mean the server was not reached or went away mid-request. */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

/** Server exception codes a later attempt can succeed after. */
const RETRYABLE_SERVER_CODES = new Set([
  159, // TIMEOUT_EXCEEDED
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  225, // NO_ZOOKEEPER
  242, // TABLE_IS_READ_ONLY
  252, // TOO_MANY_PARTS
  285, // TOO_FEW_LIVE_REPLICAS
  319, // UNKNOWN_STATUS_OF_INSERT
  999, // KEEPER_EXCEPTION
]);

/**
 * The distributed mode's store: ClickHouse over HTTP with @clickhouse/client, written to run
 * on 18.16 as well as current servers. Tables are ReplacingMergeTree(version) ordered by the
 * natural key; an upsert is one INSERT in RowBinary (clickhouse-row-binary.ts says why not
 * JSON), and reads go through table(), which adds FINAL, so only the highest version of each
 * key is visible even before parts merge.
 *
 * What 18.16 needs from the client: no query parameters (values are rendered by
 * sql-literal.ts), no settings it does not know, an idle-socket TTL well under its 3 s
 * keep-alive, the database created before a client names it, and our own parsing of its
 * error text ("Code: 62, e.displayText() = ..."), which the client's parser does not
 * recognise. The client also keeps serving after close(), so the store refuses calls itself.
 */
export class ClickHouseStore<T extends TableRegistry> implements AnalyticalStore<T> {
  readonly tables: T;
  private readonly client: ClickHouseClient;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly options: ClickHouseStoreOptions<T>) {
    if (!DATABASE_NAME.test(options.database)) throw new Error(`invalid ClickHouse database name ${options.database}`);
    this.tables = options.tables;
    this.client = this.createClient(options.database);
  }

  async migrate(): Promise<MigrationResult> {
    this.assertOpen();
    const migrations = await loadMigrations(this.options.migrationsDir, 'clickhouse');
    return this.track(async () => {
      // The client names the database on every request, so it must exist before the first.
      const admin = this.createClient(undefined);
      try {
        await admin.command({ query: `CREATE DATABASE IF NOT EXISTS "${this.options.database}"` });
      } catch (err) {
        throw wrap(err);
      } finally {
        await admin.close();
      }
      await this.command(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, checksum String, applied_at Int64) ' +
          'ENGINE = ReplacingMergeTree(applied_at) ORDER BY version',
      );
      const applied = new Map((await this.readApplied()).map((m) => [m.version, m]));
      const result: MigrationResult = { applied: [] };
      for (const migration of migrations) {
        const done = applied.get(migration.version);
        if (done) {
          assertUnchanged(migration, done.checksum);
          continue;
        }
        for (const statement of migration.statements) await this.migrationStatement(statement);
        await this.command(
          sql`INSERT INTO schema_migrations VALUES (${migration.version}, ${migration.name}, ${migration.checksum}, ${Date.now()})`.render(
            'clickhouse',
          ),
        );
        this.options.logger.info({ migration: migration.name }, 'applied store migration');
        result.applied.push(migration.name);
      }
      await this.verifySchema();
      return result;
    });
  }

  async appliedMigrations(): Promise<AppliedMigration[]> {
    this.assertOpen();
    return this.track(() => this.readApplied());
  }

  async upsert<N extends keyof T & string>(table: N, rows: readonly RowOf<T[N]>[]): Promise<void> {
    const def = tableOf(this.tables, table);
    validateRows(def, rows);
    this.assertOpen();
    if (rows.length === 0) return;
    const body = encodeRowBinary(def, rows as readonly Record<string, unknown>[]);
    const columns = def.columns.map((c) => quoteIdentifier(c.name)).join(', ');
    await this.track(async () => {
      try {
        const result = await this.client.exec({
          query: `INSERT INTO ${quoteIdentifier(def.name)} (${columns}) FORMAT RowBinary`,
          values: Readable.from([body]),
        });
        await drainStream(result.stream);
      } catch (err) {
        throw wrap(err);
      }
    });
  }

  async query<R extends Row = Row>(statement: Sql, options?: QueryOptions): Promise<R[]> {
    const text = statement.render('clickhouse');
    this.assertOpen();
    const types = resultTypesOf(statement, options);
    return this.track(async () => {
      let response: { meta?: { name: string; type: string }[]; data: Record<string, unknown>[] };
      try {
        const result = await this.client.query({ query: text, format: 'JSON', clickhouse_settings: READ_SETTINGS });
        response = await result.json<Record<string, unknown>>();
      } catch (err) {
        throw wrap(err);
      }
      const meta = response.meta ?? [];
      return response.data.map((raw) => {
        const row: Row = {};
        for (const { name, type } of meta) row[name] = toResult(raw[name], type, name, types[name] === 'bool');
        return row as R;
      });
    });
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      return (await this.client.ping()).success;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    await this.client.close();
  }

  private createClient(database: string | undefined): ClickHouseClient {
    return createClient({
      url: this.options.url,
      database,
      username: this.options.username,
      password: this.options.password,
      request_timeout: this.options.requestTimeoutMs ?? 30_000,
      // Servers before 23.11 close idle keep-alive sockets after 3 s; reusing one later resets.
      keep_alive: { enabled: true, idle_socket_ttl: 1500, eagerly_destroy_stale_sockets: true },
      log: { LoggerClass: clientLoggerClass(this.options.logger.child({ component: 'clickhouse-client' })) },
    });
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('STORE_CLOSED', 'the ClickHouse store is closed');
  }

  /** Runs work close() waits for. */
  private async track<R>(work: () => Promise<R>): Promise<R> {
    const running = work();
    this.inFlight.add(running);
    try {
      return await running;
    } finally {
      this.inFlight.delete(running);
    }
  }

  private async command(text: string): Promise<void> {
    try {
      await this.client.command({ query: text });
    } catch (err) {
      throw wrap(err);
    }
  }

  /**
   * Runs one statement of a migration. ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS, so
   * an ADD COLUMN whose column is there already counts as done: another process migrating
   * the same database at the same moment (every role migrates at start), or a run that
   * stopped after the statement and before recording its migration, added it. A column of
   * another type is refused by verifySchema() after the migrations.
   */
  private async migrationStatement(text: string): Promise<void> {
    try {
      await this.command(text);
    } catch (err) {
      if (ADD_COLUMN.test(text) && err instanceof StoreError && COLUMN_EXISTS.test(err.message)) return;
      throw err;
    }
  }

  private async select(text: string): Promise<Record<string, unknown>[]> {
    try {
      const result = await this.client.query({ query: text, format: 'JSONEachRow', clickhouse_settings: READ_SETTINGS });
      return await result.json<Record<string, unknown>>();
    } catch (err) {
      throw wrap(err);
    }
  }

  private async readApplied(): Promise<AppliedMigration[]> {
    const exists = await this.select(
      "SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'schema_migrations'",
    );
    if (Number(exists[0]?.n) === 0) return [];
    const rows = await this.select('SELECT version, name, checksum, applied_at FROM schema_migrations FINAL ORDER BY version');
    return rows.map((r) => ({
      version: Number(r.version),
      name: String(r.name),
      checksum: String(r.checksum),
      appliedAt: Number(r.applied_at),
    }));
  }

  private async verifySchema(): Promise<void> {
    const columns = await this.select('SELECT table, name, type FROM system.columns WHERE database = currentDatabase()');
    const tables = await this.select(
      'SELECT name, engine, engine_full, sorting_key FROM system.tables WHERE database = currentDatabase()',
    );
    const live = new Map<string, LiveColumn[]>();
    for (const r of columns) {
      live.set(String(r.table), [...(live.get(String(r.table)) ?? []), { name: String(r.name), type: String(r.type) }]);
    }
    const engines = new Map(tables.map((r) => [String(r.name), r]));
    const problems: string[] = [];
    for (const def of Object.values(this.tables)) {
      const mismatches = schemaMismatches(def, live.get(def.name) ?? [], (c) =>
        c.nullable ? `Nullable(${PHYSICAL[c.type]})` : PHYSICAL[c.type],
      );
      problems.push(...mismatches);
      const engine = engines.get(def.name);
      if (mismatches.length > 0 || !engine) continue;
      const wanted = `ReplacingMergeTree(${def.version})`;
      if (!String(engine.engine_full).startsWith(wanted) || engine.sorting_key !== def.key.join(', ')) {
        problems.push(
          `table ${def.name} needs ENGINE = ${wanted} ORDER BY (${def.key.join(', ')}), has ${String(engine.engine_full)}`,
        );
      }
    }
    assertNoMismatches(problems);
  }
}

/** Converts one JSON value by its ClickHouse type: quoted 64-bit integers to numbers, 0/1 to booleans. */
function toResult(value: unknown, type: string, column: string, asBool: boolean): ResultValue {
  if (value === null || value === undefined) return null;
  const inner = unwrap(type, 'Nullable');
  const element = unwrap(inner, 'Array');
  if (element !== inner && Array.isArray(value)) return value.map((v) => toResult(v, element, column, false));
  if (typeof value === 'string' && /^U?Int(64|128|256)$/.test(inner)) {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new StoreError('STORE_UNREPRESENTABLE_RESULT', `column ${column}: ${value} is beyond 2^53`);
    return asBool ? n !== 0 : n;
  }
  if (asBool && typeof value === 'number') return value !== 0;
  return value as ResultValue;
}

function unwrap(type: string, wrapper: string): string {
  return type.startsWith(`${wrapper}(`) && type.endsWith(')') ? type.slice(wrapper.length + 1, -1) : type;
}

const ADD_COLUMN = /^\s*ALTER\s+TABLE\s+\S+\s+ADD\s+COLUMN\s/i;
/** The server's answer to adding a column the table has (code 44 on 18.16, 15 on later servers, in the same words). */
const COLUMN_EXISTS = /Cannot add column \S+: column with this name already exists/i;

function wrap(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const error = err instanceof Error ? err : new Error(String(err));
  const socketCode = (error as { code?: unknown }).code;
  if (typeof socketCode === 'string' && NETWORK_ERRORS.has(socketCode)) {
    return new StoreError('STORE_UNAVAILABLE', `ClickHouse unreachable: ${error.message}`, true, { cause: err });
  }
  if (/^Timeout error\.?$|socket hang up/i.test(error.message)) {
    return new StoreError('STORE_UNAVAILABLE', `ClickHouse did not answer: ${error.message}`, true, { cause: err });
  }
  // Current servers' errors are parsed by the client; 18.16's only carry "Code: N" in the text.
  const serverCode = err instanceof ClickHouseError ? Number(err.code) : Number(/\bCode: (\d+)/.exec(error.message)?.[1]);
  const retryable = RETRYABLE_SERVER_CODES.has(serverCode);
  return new StoreError(retryable ? 'STORE_UNAVAILABLE' : 'STORE_QUERY_FAILED', `ClickHouse: ${error.message}`, retryable, {
    cause: err,
  });
}

/**
 * The client logs through a class it instantiates itself; this one forwards to our logger.
 * Request errors arrive here and again as rejections we wrap and report, so they log at debug.
 */
function clientLoggerClass(logger: Logger): new () => ClientLogger {
  return class implements ClientLogger {
    trace({ message, args }: LogParams): void {
      logger.trace(args ?? {}, message);
    }
    debug({ message, args }: LogParams): void {
      logger.debug(args ?? {}, message);
    }
    info({ message, args }: LogParams): void {
      logger.info(args ?? {}, message);
    }
    warn({ message, args, err }: WarnLogParams): void {
      logger.warn({ ...args, err }, message);
    }
    error({ message, args, err }: ErrorLogParams): void {
      logger.debug({ ...args, err }, message);
    }
  };
}
