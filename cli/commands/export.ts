import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openLogServices, type LogServices } from '../../infra/bootstrap.ts';
import { exportFormatOf, writeTableFile } from '../../infra/export/table-file.ts';
import { defaultDuckDbPath, duckDbFileInUse, openStore } from '../../projections/open-store.ts';
import type { BacktestResult } from '../../research/backtest/run.ts';
import { backtestEventRows } from '../../research/export/events.ts';
import { HISTORY_COLUMNS, historyPages } from '../../research/export/history.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { BACKTEST_RUN_ID, BacktestEventsPartSchema, BacktestRunEventSchema } from '../../schemas/records.ts';
import { eventsPartsOf, joinedResult } from '../../projections/read-models/backtest-events.ts';
import type { CliCommand, CliContext } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { readControlEvents } from '../../projections/control-events.ts';
import { Progress } from '../progress.ts';

const USAGE = `tqa export history --from T --to T --out FILE.parquet|FILE.csv
tqa export run btr_… --out FILE.parquet|FILE.csv
    history: every snapshot of the store's point-in-time history with from ≤ ts ≤ to (T is
      ISO-8601 or unix seconds): token, time, chain, narrative, every score and rule field.
      Reads the store, so with TQA_STORE=duckdb the service must not be running.
    run: the events of a done backtest run (one row per entry: entry and exit, return, max
      drawdown, time to peak, died, the rule fields at entry), read from the log, so it works
      while the service runs.
    Times are timestamps (UTC) in both formats; the files load in pandas and polars as they are.`;

function timeArg(value: string | undefined, name: string): number {
  if (value === undefined) throw new UsageError(`--${name} is required`);
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  if (!Number.isFinite(ms)) throw new UsageError(`--${name} must be ISO-8601 or unix seconds`);
  return ms;
}

function outArg(value: string | undefined): string {
  if (value === undefined || exportFormatOf(value) === null) throw new UsageError('--out must name a .parquet or .csv file');
  return value;
}

async function exportHistory(from: number, to: number, out: string, ctx: CliContext): Promise<number> {
  if (from > to) throw new UsageError('--from must not be after --to');
  const path = defaultDuckDbPath(ctx.config);
  if (ctx.config.TQA_STORE === 'duckdb' && existsSync(path) && (await duckDbFileInUse(path))) {
    ctx.stderr.write('the store is open in the running service (DuckDB allows one process per file): stop it first, or export a backtest run, which reads the log\n');
    return 1;
  }
  const store = await openStore(ctx.config, ctx.logger);
  const progress = new Progress({ stream: ctx.stderr, label: 'export', unit: 'snapshots' });
  let count = 0;
  async function* counted() {
    for await (const page of historyPages(store, from, to)) {
      count += page.length;
      progress.update(count);
      yield page;
    }
  }
  try {
    const written = await writeTableFile(out, HISTORY_COLUMNS, counted(), { timeColumns: ['ts'] });
    progress.finish(`${written} snapshots written to ${out}`);
    return 0;
  } finally {
    await store.close();
  }
}

/** A done result with its events, read back from their parts in the log when they are in parts; null when a part is missing. */
async function wholeResult(result: string, runId: string, services: LogServices): Promise<string | null> {
  const count = eventsPartsOf(result);
  if (count === null) return result;
  const parts = new Map<number, string>();
  for (const part of await readControlEvents(services.log, services.codec, TOPICS.backtestEvents.name, BacktestEventsPartSchema)) {
    if (part.runId === runId) parts.set(part.part, part.events);
  }
  return joinedResult(result, count, (part) => parts.get(part));
}

async function exportRun(runId: string, out: string, ctx: CliContext): Promise<number> {
  if (!BACKTEST_RUN_ID.test(runId)) throw new UsageError('the run id has the form btr_<hex>');
  const services = await openLogServices(ctx.config, ctx.logger);
  try {
    const events = await readControlEvents(services.log, services.codec, TOPICS.backtestRuns.name, BacktestRunEventSchema);
    const done = events.find((e) => e.runId === runId && e.status === 'done' && e.result !== null);
    if (done === undefined) {
      ctx.stderr.write(`run ${runId} is not done (or unknown)\n`);
      return 1;
    }
    const result = await wholeResult(done.result!, runId, services);
    if (result === null) {
      ctx.stderr.write(`run ${runId} is done, but not all parts of its events are in ${TOPICS.backtestEvents.name}\n`);
      return 1;
    }
    const { columns, rows, timeColumns } = backtestEventRows(JSON.parse(result) as BacktestResult);
    const written = await writeTableFile(out, columns, [rows], { timeColumns });
    ctx.stderr.write(`${written} events written to ${out}\n`);
    return 0;
  } finally {
    await services.close();
  }
}

export const exportCommand: CliCommand = {
  name: 'export',
  summary: 'snapshot history or a backtest run\'s events to Parquet or CSV',
  usage: USAGE,
  async run(args, ctx) {
    const { values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: { from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' } },
    });
    const [what, id] = positionals;
    if (what === 'history') return exportHistory(timeArg(values.from, 'from'), timeArg(values.to, 'to'), outArg(values.out), ctx);
    if (what === 'run' && id !== undefined) return exportRun(id, outArg(values.out), ctx);
    throw new UsageError('say what to export: history, or run btr_…');
  },
};
