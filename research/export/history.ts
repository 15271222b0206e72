import type { ExportColumn, ExportColumnType, ExportRow } from '../../infra/export/table-file.ts';
import { column, columns, int64, sql, table } from '../../infra/store/sql-literal.ts';
import type { LogicalType } from '../../infra/store/table.ts';
import type { ReadStore } from '../../projections/read-models/cursor.ts';
import { snapshotHistory } from '../../projections/tables/quant.ts';

/** Snapshot history for a window, as stored (every score and rule field of each snapshot), read a day at a time. */

const PAGE_MS = 86_400_000;
const TYPES: Record<LogicalType, ExportColumnType> = { string: 'VARCHAR', json: 'VARCHAR', int64: 'BIGINT', float64: 'DOUBLE', bool: 'BOOLEAN' };

export const HISTORY_COLUMNS: readonly ExportColumn[] = snapshotHistory.columns.map((c) => ({ name: c.name, type: TYPES[c.type] }));

/** Rows of snapshot_history with from ≤ ts ≤ to, in (ts, token) order, page by page. */
export async function* historyPages(store: ReadStore, from: number, to: number): AsyncIterable<ExportRow[]> {
  const ts = column(snapshotHistory, 'ts');
  for (let start = from; start <= to; start += PAGE_MS) {
    const end = Math.min(start + PAGE_MS - 1, to);
    yield store.query(
      sql`SELECT ${columns(snapshotHistory)} FROM ${table(snapshotHistory)} WHERE ${ts} >= ${int64(start)} AND ${ts} <= ${int64(end)}
          ORDER BY ${ts}, ${column(snapshotHistory, 'token_id')}`,
    ) as Promise<ExportRow[]>;
  }
}
