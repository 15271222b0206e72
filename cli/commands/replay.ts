import { rename, rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { PROJECTIONS } from '../../projections/index.ts';
import { replayProjections, type ReplayResult } from '../../projections/runtime/replay.ts';
import { PROJECTION_TABLES, type ProjectionTables } from '../../projections/tables.ts';
import { openLogServices } from '../../infra/bootstrap.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { defaultDuckDbPath, duckDbFileInUse, openStore } from '../../projections/open-store.ts';
import { sql, table } from '../../infra/store/sql-literal.ts';
import type { CliCommand, CliContext } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { Progress } from '../progress.ts';
import { exists } from '../../infra/fs/exists.ts';

const USAGE = `tqa replay [--from-beginning] [--only NAME,...] [--store-path PATH] [--database NAME]
    Rebuild projections (${PROJECTIONS.map((p) => p.name).join(', ')}) from the log into a
    fresh store. Every partition is read from its first retained record (--from-beginning says
    so; it is the only start there is) in consumer groups replay.<name>.<run id>, so the live
    projection.<name> groups are not touched. Records that fail are counted and logged, not
    dead-lettered again.
    TQA_STORE=duckdb: builds <PATH>.replay-<run id>.tmp beside the target (--store-path, default
      <TQA_DATA_DIR>/store.duckdb) and renames it over the target only once the rebuild
      finished; a failed or interrupted run leaves the target as it was. Refused while another
      process (a running service) has the target open. --only needs --store-path here, since
      the replaced store would lack the other projections' tables.
    TQA_STORE=clickhouse: builds a fresh database (--database, default
      <CLICKHOUSE_DATABASE>_replay_<run id>; refused when it holds rows) and leaves the live
      one untouched. To serve it: stop the projections role before the replay, then set
      CLICKHOUSE_DATABASE to the new database and start the roles again.
    Processor state is not rebuilt here: a processor replays its inputs by itself when its
    checkpoints (<TQA_DATA_DIR>/state/<processor>/) are deleted.`;

export const replayCommand: CliCommand = {
  name: 'replay',
  summary: 'rebuild projections from the log into a fresh store',
  usage: USAGE,
  async run(args, ctx) {
    const { values } = parse(args);
    const projections = selected(values.only);
    const runId = new Date().toISOString().replace(/\D/g, '');
    if (ctx.config.TQA_STORE === 'duckdb') {
      if (values.database !== undefined) throw new UsageError('--database is for TQA_STORE=clickhouse');
      if (values.only !== undefined && values['store-path'] === undefined) {
        throw new UsageError('--only needs --store-path with DuckDB: replacing the live store would drop the other projections');
      }
      return replayIntoDuckDb(values['store-path'] ?? defaultDuckDbPath(ctx.config), projections, runId, ctx);
    }
    if (values['store-path'] !== undefined) throw new UsageError('--store-path is for TQA_STORE=duckdb');
    return replayIntoClickHouse(values.database ?? `${ctx.config.CLICKHOUSE_DATABASE}_replay_${runId}`, projections, runId, ctx);
  },
};

type Selected = typeof PROJECTIONS;

function parse(args: string[]) {
  try {
    return parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        'from-beginning': { type: 'boolean' },
        only: { type: 'string' },
        'store-path': { type: 'string' },
        database: { type: 'string' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function selected(only: string | undefined): Selected {
  if (only === undefined) return PROJECTIONS;
  const names = only.split(',').map((n) => n.trim()).filter(Boolean);
  const unknown = names.filter((n) => !PROJECTIONS.some((p) => p.name === n));
  if (names.length === 0 || unknown.length > 0) {
    const known = PROJECTIONS.map((p) => p.name).join(', ');
    throw new UsageError(`unknown projection ${unknown.join(', ') || '(none)'}; projections are ${known}`);
  }
  return PROJECTIONS.filter((p) => names.includes(p.name));
}

async function replayIntoDuckDb(target: string, projections: Selected, runId: string, ctx: CliContext): Promise<number> {
  if ((await exists(target)) && (await duckDbFileInUse(target))) {
    ctx.stderr.write(`${target} is open in another process (a running service?): stop it first, or give --store-path\n`);
    return 1;
  }
  const temp = `${target}.replay-${runId}.tmp`;
  let done = false;
  try {
    const result = await replayInto(await openStore(ctx.config, ctx.logger, { duckdbPath: temp }), projections, runId, ctx);
    // Closing checkpoints DuckDB's write-ahead log into the file; renaming the file alone must carry everything.
    if (await exists(`${temp}.wal`)) throw new Error(`${temp} kept a write-ahead log after closing; not replacing ${target}`);
    if ((await exists(target)) && (await duckDbFileInUse(target))) {
      ctx.stderr.write(`${target} was opened by another process during the replay; the rebuilt store stays at ${temp}\n`);
      done = true;
      return 1;
    }
    // A write-ahead log left by the old store would be applied to the new one on its next open.
    await rm(`${target}.wal`, { force: true });
    await rename(temp, target);
    done = true;
    ctx.stdout.write(summary(result, projections) + `replaced ${target} (DuckDB)\n`);
    return 0;
  } finally {
    if (!done) await Promise.all([rm(temp, { force: true }), rm(`${temp}.wal`, { force: true })]);
  }
}

async function replayIntoClickHouse(database: string, projections: Selected, runId: string, ctx: CliContext): Promise<number> {
  const store = await openStore(ctx.config, ctx.logger, { clickhouseDatabase: database });
  const filled = await firstFilledTable(store).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  if (filled !== undefined) {
    await store.close();
    ctx.stderr.write(`ClickHouse database ${database} is not empty (table ${filled} has rows): give a new --database\n`);
    return 1;
  }
  const result = await replayInto(store, projections, runId, ctx);
  ctx.stdout.write(
    summary(result, projections) +
      `rebuilt into ClickHouse database ${database}; ${ctx.config.CLICKHOUSE_DATABASE} is untouched ` +
      `(set CLICKHOUSE_DATABASE=${database} to serve the rebuilt one)\n`,
  );
  return 0;
}

async function firstFilledTable(store: AnalyticalStore<ProjectionTables>): Promise<string | undefined> {
  for (const def of Object.values(PROJECTION_TABLES)) {
    const [{ n }] = await store.query<{ n: number }>(sql`SELECT count() AS n FROM ${table(def)}`);
    if (n > 0) return def.name;
  }
  return undefined;
}

/** Replays into the store and closes it, whatever happens. */
async function replayInto(
  store: AnalyticalStore<ProjectionTables>,
  projections: Selected,
  runId: string,
  ctx: CliContext,
): Promise<ReplayResult> {
  const services = await openLogServices(ctx.config, ctx.logger);
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const progress = new Progress({ stream: ctx.stderr, label: 'replay', unit: 'events' });
  try {
    const result = await replayProjections({
      projections,
      log: services.log,
      codec: services.codec,
      store,
      logger: ctx.logger,
      runId,
      signal: abort.signal,
      onProgress: ({ records, total }) => progress.update(records, total > 0 ? records / total : null),
    });
    progress.finish();
    return result;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await services.close();
    await store.close();
  }
}

function summary(result: ReplayResult, projections: Selected): string {
  const rate = result.seconds > 0 ? Math.round(result.records / result.seconds) : 0;
  const per = projections.map((p) => `${p.name} ${result.byProjection[p.name].records}`).join(', ');
  return (
    `replayed ${result.records} events (${per}) in ${result.seconds.toFixed(1)} s: ${rate} events/s; ` +
    `${result.rowsWritten} rows written; ${result.failed} records refused\n`
  );
}
