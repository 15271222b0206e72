import { useEffect, useMemo, useState } from 'preact/hooks';
import type { BacktestEvent, BacktestResult } from '../../research/backtest/run.ts';
import { backtestEventRows } from '../../research/export/events.ts';
import { hours, minute, TokenLink } from '../format.tsx';
import { signedPercent } from '../research-values.ts';

/**
 * A run's events: the table, and the download with the columns of `tqa export run`. The API
 * serves no export, so the CSV is written here from the result; Parquet is left to that command.
 */

/** Events listed before "Show all": a short horizon can give thousands. */
const EVENTS_SHOWN = 200;

const quoted = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text);

function eventsCsv(result: Pick<BacktestResult, 'events'>): string {
  const { columns, rows, timeColumns } = backtestEventRows(result);
  const times = new Set(timeColumns);
  const cell = (name: string, value: string | number | boolean | null) => {
    if (value === null) return '';
    return times.has(name) ? new Date(Number(value)).toISOString() : quoted(String(value));
  };
  const lines = [columns.map((c) => c.name), ...rows.map((row) => columns.map((c) => cell(c.name, row[c.name])))];
  return lines.map((line) => `${line.join(',')}\r\n`).join('');
}

export function EventsExport({ runId, result }: { runId: string; result: BacktestResult }) {
  const href = useMemo(() => URL.createObjectURL(new Blob([eventsCsv(result)], { type: 'text/csv' })), [result]);
  useEffect(() => () => URL.revokeObjectURL(href), [href]);
  return (
    <p class="export">
      <a class="csv" href={href} download={`${runId}-events.csv`}>
        Download the events as CSV
      </a>
      {' · '}Parquet: <code>tqa export run {runId} --out {runId}-events.parquet</code>
    </p>
  );
}

export function EventsTable({ events }: { events: BacktestEvent[] }) {
  const [all, setAll] = useState(false);
  const fields = Object.keys(events[0]?.rule_values ?? {});
  const shown = all ? events : events.slice(0, EVENTS_SHOWN);
  return (
    <>
      <div class="events-scroll">
        <table class="events">
          <thead>
            <tr>
              <th>entry</th>
              <th>token</th>
              <th>chain</th>
              <th>entry price</th>
              <th>exit price</th>
              <th>return</th>
              <th>max drawdown</th>
              <th>time to peak</th>
              <th>died</th>
              {fields.map((f) => (
                <th>{f}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {shown.map((e) => (
              <tr data-token={e.token_id} data-entry={e.entry_at}>
                <td>{minute(e.entry_at)}</td>
                <td>
                  <TokenLink token={{ id: e.token_id, symbol: e.token_id }} />
                </td>
                <td>{e.chain}</td>
                <td class="num">{e.entry_price.toPrecision(4)}</td>
                <td class="num">{e.exit_price?.toPrecision(4) ?? '–'}</td>
                <td class="num" data-value={String(e.return)}>
                  {signedPercent(e.return)}
                </td>
                <td class="num">{signedPercent(e.max_drawdown)}</td>
                <td class="num">{hours(e.time_to_peak_ms)}</td>
                <td>{e.died ? 'yes' : ''}</td>
                {fields.map((f) => (
                  <td class="num">{e.rule_values[f] ?? '–'}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {!all && events.length > EVENTS_SHOWN && (
        <button class="all-events" onClick={() => setAll(true)}>
          Show all {events.length}
        </button>
      )}
    </>
  );
}
