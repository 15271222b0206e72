import type { ExportColumn, ExportRow } from '../../infra/export/table-file.ts';
import type { BacktestResult } from '../backtest/run.ts';

/**
 * The events of a backtest result as flat rows, one per entry: the entry and exit, the
 * outcome, and one `rule_<field>` column per rule field with its value at entry.
 */
export function backtestEventRows(result: Pick<BacktestResult, 'events'>): { columns: ExportColumn[]; rows: ExportRow[]; timeColumns: string[] } {
  const fields = [...new Set(result.events.flatMap((e) => Object.keys(e.rule_values)))].sort();
  const columns: ExportColumn[] = [
    { name: 'token_id', type: 'VARCHAR' },
    { name: 'chain', type: 'VARCHAR' },
    { name: 'entry_at', type: 'BIGINT' },
    { name: 'entry_price', type: 'DOUBLE' },
    { name: 'exit_at', type: 'BIGINT' },
    { name: 'exit_price', type: 'DOUBLE' },
    { name: 'return', type: 'DOUBLE' },
    { name: 'max_drawdown', type: 'DOUBLE' },
    { name: 'time_to_peak_ms', type: 'BIGINT' },
    { name: 'died', type: 'BOOLEAN' },
    ...fields.map((f): ExportColumn => ({ name: `rule_${f}`, type: 'DOUBLE' })),
  ];
  const rows = result.events.map((e): ExportRow => {
    const row: Record<string, string | number | boolean | null> = {
      token_id: e.token_id,
      chain: e.chain,
      entry_at: Date.parse(e.entry_at),
      entry_price: e.entry_price,
      exit_at: Date.parse(e.exit_at),
      exit_price: e.exit_price,
      return: e.return,
      max_drawdown: e.max_drawdown,
      time_to_peak_ms: e.time_to_peak_ms,
      died: e.died,
    };
    for (const f of fields) row[`rule_${f}`] = e.rule_values[f] ?? null;
    return row;
  });
  return { columns, rows, timeColumns: ['entry_at', 'exit_at'] };
}
