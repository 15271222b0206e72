import type { AnalyticalStore, Row } from '../../infra/store/port.ts';
import { column, columns, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import type { TableDef } from '../../infra/store/table.ts';
import { PROJECTION_TABLES, type ProjectionTables } from '../../projections/tables.ts';

/** Every row of a table, ordered by its natural key. */
export function everyRow(def: TableDef): Sql {
  const order = def.key.map((k) => column(def, k)).reduce((a, b) => sql`${a}, ${b}`);
  return sql`SELECT ${columns(def)} FROM ${table(def)} ORDER BY ${order}`;
}

/** Every projection table's rows in key order: what two stores built from one log must share. */
export async function dumpStore(store: AnalyticalStore<ProjectionTables>): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = {};
  for (const def of Object.values(PROJECTION_TABLES)) out[def.name] = await store.query(everyRow(def));
  return out;
}
