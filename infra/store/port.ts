import type { Sql } from './sql-literal.ts';
import type { LogicalType, RowOf, TableRegistry } from './table.ts';

/**
 * The analytical store port: where projection writers put rows and read models read them.
 * Two adapters implement it, DuckDB in-process (embedded mode, infra/store/duckdb-store.ts)
 * and ClickHouse (distributed mode, infra/store/clickhouse-store.ts); the contract suite in
 * test/contract/store.contract.ts holds both to the same behaviour.
 *
 * Writes are idempotent upserts by natural key and version (replaying a topic into the
 * store gives the same rows); reads see, per natural key, only the row with the highest
 * version. All SQL is built with the `sql` tag of sql-literal.ts, never from raw strings.
 * Failures are StoreErrors (errors.ts) with a code and a retryable flag.
 */

/** A value as read back: int64 columns as numbers, json as its text. */
export type ResultValue = string | number | boolean | null | ResultValue[];
export type Row = Record<string, ResultValue>;

export interface QueryOptions {
  /**
   * Logical types of result columns not selected through `columns(def)`, for the values
   * a store cannot tell apart on its own (a ClickHouse bool is a UInt8 0/1).
   */
  types?: Readonly<Record<string, LogicalType>>;
}

export interface AppliedMigration {
  /** The number the file name starts with: 0001_init.sql is version 1. */
  version: number;
  name: string;
  /** sha256 of the file as applied; a later edit of the file fails migrate(). */
  checksum: string;
  appliedAt: number;
}

export interface MigrationResult {
  /** Names of the migrations this call applied; empty when the store was up to date. */
  applied: string[];
}

export interface AnalyticalStore<T extends TableRegistry = TableRegistry> {
  /** The table definitions this store serves: the allow-list of table and column names. */
  readonly tables: T;
  /**
   * Applies the store's pending migrations in version order, records each in the
   * schema_migrations table, then checks every table of `tables` against the live schema
   * (STORE_SCHEMA_MISMATCH when a definition has no migration or they disagree).
   * Safe to call at every start and from several processes.
   */
  migrate(): Promise<MigrationResult>;
  appliedMigrations(): Promise<AppliedMigration[]>;
  /**
   * Writes rows; per natural key the row with the highest version wins, ties going to the
   * last written. Writing a batch twice, or an older version after a newer, changes nothing
   * visible. Rows are validated against the definition before anything is sent. Resolves
   * once the rows are visible to query(); one insert statement per call.
   */
  upsert<N extends keyof T & string>(table: N, rows: readonly RowOf<T[N]>[]): Promise<void>;
  /**
   * Runs a SELECT built with the `sql` tag. Rows are plain objects of JavaScript values; an
   * integer beyond 2^53 fails with STORE_UNREPRESENTABLE_RESULT rather than losing digits.
   * `R` is the shape the caller expects; it is not checked beyond the value conversions.
   */
  query<R extends Row = Row>(statement: Sql, options?: QueryOptions): Promise<R[]>;
  /** True when the store answers; false when it is down or closed. Never throws. */
  ping(): Promise<boolean>;
  /** Waits for writes in progress and releases the connection; later calls fail with STORE_CLOSED. */
  close(): Promise<void>;
}

/** The logical types of a statement's result columns: the statement's own, overridden by the caller's. */
export function resultTypesOf(statement: Sql, options?: QueryOptions): Record<string, LogicalType> {
  return { ...Object.fromEntries(statement.resultTypes), ...options?.types };
}
