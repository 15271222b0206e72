import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CreateBacktestBodySchema, type CreateBacktestBody } from '../../api/schemas/research.ts';
import { exportFormatOf, writeTableFile } from '../../infra/export/table-file.ts';
import { normaliseBacktestSpec } from '../../research/backtest/spec.ts';
import { runBacktest, type BacktestResult } from '../../research/backtest/run.ts';
import { backtestEventRows } from '../../research/export/events.ts';
import { storeHistory } from '../../research/history/store.ts';
import { specOf } from '../../api/backtest-spec.ts';
import { defaultDuckDbPath, duckDbFileInUse, openStore } from '../../projections/open-store.ts';
import type { CliCommand, CliContext } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { parseOrUsage } from '../../projections/control-events.ts';
import { Progress } from '../progress.ts';
import { backtestTable } from './backtest-report.ts';
import { backtestThroughApi } from './backtest-remote.ts';

const USAGE = `tqa backtest --rules JSON --horizon 15m|1h|6h|24h|3d|7d [--name NAME] [--from T] [--to T] [--cooldown H]
             [--dead-token-policy last_price|total_loss|exclude] [--chains a,b] [--min-liquidity-usd N]
             [--json] [--export-events FILE.csv|FILE.parquet] [--api URL] [--key KEY]
    Runs a point-in-time backtest with the engine of POST /v1/quant/backtests, over the store's
    snapshot history, with a progress bar on stderr; prints the result as a table (--json: the
    API's result object). --rules is a JSON array of scanner rules, e.g.
    '[{"field":"momentum","op":">=","value":60}]'; T is ISO-8601 or unix seconds.
    With TQA_STORE=duckdb and the service running (it holds the store file), the run goes
    through its API (--api, default http://localhost:PORT; key from --key, TQA_API_KEY or the
    data dir's demo key) and is listed among the key's runs.`;

/** The options as the API's request body, validated by the same schema. */
function bodyOf(values: Record<string, string | boolean | undefined>): CreateBacktestBody {
  const str = (name: string) => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const time = (name: string) => {
    const v = str(name);
    return v !== undefined && /^\d+$/.test(v) ? Number(v) : v;
  };
  let rules: unknown;
  try {
    rules = JSON.parse(str('rules') ?? 'null');
  } catch {
    throw new UsageError('--rules must be a JSON array of rules');
  }
  const chains = str('chains')?.split(',').map((c) => c.trim());
  const minLiquidity = str('min-liquidity-usd');
  const universe = chains === undefined && minLiquidity === undefined ? undefined : { chains, min_liquidity_usd: minLiquidity === undefined ? undefined : Number(minLiquidity) };
  const raw = {
    rules,
    horizon: str('horizon'),
    name: str('name'),
    from: time('from'),
    to: time('to'),
    cooldown: str('cooldown'),
    dead_token_policy: str('dead-token-policy'),
    universe: universe === undefined ? undefined : JSON.parse(JSON.stringify(universe)),
  };
  return parseOrUsage(CreateBacktestBodySchema, JSON.parse(JSON.stringify(raw)));
}

async function runLocally(body: CreateBacktestBody, ctx: CliContext, progress: Progress): Promise<BacktestResult> {
  const store = await openStore(ctx.config, ctx.logger);
  try {
    return await runBacktest(normaliseBacktestSpec(specOf(body)), storeHistory(store), {
      onProgress: (scanned, total) => progress.update(scanned, total === 0 ? 1 : scanned / total),
    });
  } finally {
    await store.close();
  }
}

export const backtestCommand: CliCommand = {
  name: 'backtest',
  summary: 'run a point-in-time backtest from the command line; table or JSON, events to CSV or Parquet',
  usage: USAGE,
  async run(args, ctx) {
    const { values } = parseArgs({
      args,
      strict: true,
      options: {
        rules: { type: 'string' },
        horizon: { type: 'string' },
        name: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        cooldown: { type: 'string' },
        'dead-token-policy': { type: 'string' },
        chains: { type: 'string' },
        'min-liquidity-usd': { type: 'string' },
        json: { type: 'boolean' },
        'export-events': { type: 'string' },
        api: { type: 'string' },
        key: { type: 'string' },
      },
    });
    const body = bodyOf(values);
    const exportTo = values['export-events'];
    if (exportTo !== undefined && exportFormatOf(exportTo) === null) throw new UsageError('--export-events must name a .csv or .parquet file');

    const progress = new Progress({ stream: ctx.stderr, label: 'backtest', unit: 'snapshots' });
    const path = defaultDuckDbPath(ctx.config);
    const remote = ctx.config.TQA_STORE === 'duckdb' && existsSync(path) && (await duckDbFileInUse(path));
    let result: BacktestResult;
    if (remote) {
      const run = await backtestThroughApi(body, { config: ctx.config, api: values.api, key: values.key, onProgress: (s, t) => progress.update(s, t === 0 ? 1 : s / t) });
      progress.finish(`run ${run.runId} through the API`);
      result = run.result;
    } else {
      result = await runLocally(body, ctx, progress);
      progress.finish();
    }

    if (exportTo !== undefined) {
      const { columns, rows, timeColumns } = backtestEventRows(result);
      const written = await writeTableFile(exportTo, columns, [rows], { timeColumns });
      ctx.stderr.write(`${written} events written to ${exportTo}\n`);
    }
    ctx.stdout.write(values.json ? JSON.stringify(result) + '\n' : backtestTable(result));
    return 0;
  },
};

