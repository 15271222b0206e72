import { DuckDBInstance, type DuckDBAppender } from '@duckdb/node-api';

/**
 * Writes rows to a Parquet or CSV file through an in-memory DuckDB, which writes both
 * natively: the rows are appended to a table of the given columns, then copied to the file.
 * Columns named in `timeColumns` (epoch ms) are written as timestamps, so pandas and polars
 * load them as datetimes; the rest keep their types.
 */

export type ExportFormat = 'parquet' | 'csv';
export type ExportColumnType = 'VARCHAR' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN';

export interface ExportColumn {
  name: string;
  type: ExportColumnType;
}

export type ExportRow = Readonly<Record<string, string | number | boolean | null>>;

/** The format a file name asks for, or null when it ends in neither .parquet nor .csv. */
export function exportFormatOf(path: string): ExportFormat | null {
  const lower = path.toLowerCase();
  return lower.endsWith('.parquet') ? 'parquet' : lower.endsWith('.csv') ? 'csv' : null;
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

function quoted(name: string): string {
  if (!IDENTIFIER.test(name)) throw new Error(`export column ${JSON.stringify(name)} is not a plain identifier`);
  return `"${name}"`;
}

function append(appender: DuckDBAppender, column: ExportColumn, value: string | number | boolean | null | undefined): void {
  if (value === null || value === undefined) return appender.appendNull();
  switch (column.type) {
    case 'VARCHAR':
      return appender.appendVarchar(String(value));
    case 'BIGINT':
      return appender.appendBigInt(BigInt(Math.trunc(Number(value))));
    case 'DOUBLE':
      return appender.appendDouble(Number(value));
    case 'BOOLEAN':
      return appender.appendBoolean(Boolean(value));
  }
}

/** Writes every batch's rows to `path` and returns how many rows it wrote. */
export async function writeTableFile(
  path: string,
  columns: readonly ExportColumn[],
  batches: AsyncIterable<readonly ExportRow[]> | Iterable<readonly ExportRow[]>,
  options: { timeColumns?: readonly string[] } = {},
): Promise<number> {
  const format = exportFormatOf(path);
  if (format === null) throw new Error(`${path}: the file name must end in .parquet or .csv`);
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`CREATE TABLE rows (${columns.map((c) => `${quoted(c.name)} ${c.type}`).join(', ')})`);
    const appender = await connection.createAppender('rows');
    let count = 0;
    for await (const batch of batches) {
      for (const row of batch) {
        for (const column of columns) append(appender, column, row[column.name]);
        appender.endRow();
        count++;
      }
      appender.flushSync();
    }
    appender.closeSync();
    const times = new Set(options.timeColumns ?? []);
    const select = columns.map((c) => (times.has(c.name) ? `epoch_ms(${quoted(c.name)}) AS ${quoted(c.name)}` : quoted(c.name))).join(', ');
    const target = `'${path.replaceAll("'", "''")}'`;
    await connection.run(`COPY (SELECT ${select} FROM rows) TO ${target} (${format === 'parquet' ? 'FORMAT PARQUET' : 'FORMAT CSV, HEADER'})`);
    return count;
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}
