import { parseArgs } from 'node:util';
import { openLogServices } from '../../infra/bootstrap.ts';
import {
  DEFAULT_AUTHORS,
  DEFAULT_TOKENS,
  runLive,
  seedHistory,
  type SimRunResult,
} from '../../infra/feeds/sim/runner.ts';
import { groundTruthFile, loadSimState, stateFile } from '../../infra/feeds/sim/state-store.ts';
import { parseIsoTime } from '../../infra/feeds/time.ts';
import type { CliCommand, CliContext } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { Progress } from '../progress.ts';

const USAGE = `tqa sim history [--days N] [--seed S] [--tokens N] [--authors N] [--end ISO] [--force]
    Produce N days (default 7) of simulated history ending at --end (default: now, rounded
    down to the minute). Refuses a data dir that already holds a simulation unless --force.
tqa sim live [--speed X]
    Continue the saved simulation: X simulated seconds per second (default 1, real time).
    Stop with Ctrl-C; the next run resumes where this one stopped.`;

export const simCommand: CliCommand = {
  name: 'sim',
  summary: 'simulated crypto world with known ground truth: history and live feeds',
  usage: USAGE,
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'history') return history(rest, ctx);
    if (sub === 'live') return live(rest, ctx);
    throw new UsageError(sub ? `unknown sim subcommand "${sub}"` : 'sim needs a subcommand: history or live');
  },
};

async function history(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(args, {
    days: { type: 'string' },
    seed: { type: 'string' },
    tokens: { type: 'string' },
    authors: { type: 'string' },
    end: { type: 'string' },
    force: { type: 'boolean' },
  });
  const days = positiveNumber('--days', values.days ?? '7');
  const seed = integer('--seed', values.seed ?? '1');
  const tokens = positiveInteger('--tokens', values.tokens ?? String(DEFAULT_TOKENS));
  const authors = positiveInteger('--authors', values.authors ?? String(DEFAULT_AUTHORS));
  const endMs = values.end === undefined ? Date.now() : isoTime('--end', values.end);
  const dataDir = ctx.config.TQA_DATA_DIR;
  if (!values.force && (await loadSimState(dataDir))) {
    ctx.stderr.write(`${stateFile(dataDir)} exists: this data dir already holds a simulation. Use sim live to continue it, or --force.\n`);
    return 1;
  }
  const services = await openLogServices(ctx.config, ctx.logger);
  const { stop, dispose } = stopOnSignals();
  const progress = new Progress({ stream: ctx.stderr, label: 'sim history', unit: 'records' });
  const started = Date.now();
  try {
    const result = await seedHistory({
      log: services.log,
      codec: services.codec,
      dataDir,
      seed,
      days,
      endMs,
      tokens,
      authors,
      signal: stop,
      onProgress: (p) => progress.update(p.records, p.fraction, new Date(p.simMs).toISOString()),
    });
    progress.finish();
    ctx.stdout.write(summary(result, Date.now() - started) + `ground truth: ${groundTruthFile(dataDir)}\n`);
    return 0;
  } finally {
    dispose();
    await services.close();
  }
}

async function live(args: string[], ctx: CliContext): Promise<number> {
  const { values } = parse(args, { speed: { type: 'string' } });
  const speed = positiveNumber('--speed', values.speed ?? '1');
  const dataDir = ctx.config.TQA_DATA_DIR;
  if (!(await loadSimState(dataDir))) {
    ctx.stderr.write(`no simulation in ${dataDir}: run tqa sim history first\n`);
    return 1;
  }
  const services = await openLogServices(ctx.config, ctx.logger);
  const { stop, dispose } = stopOnSignals();
  const progress = new Progress({ stream: ctx.stderr, label: `sim live x${speed}`, unit: 'records', lineEveryMs: 30_000 });
  const started = Date.now();
  try {
    const result = await runLive({
      log: services.log,
      codec: services.codec,
      dataDir,
      speed,
      signal: stop,
      onProgress: (p) => progress.update(p.records, null, new Date(p.simMs).toISOString()),
    });
    progress.finish();
    ctx.stdout.write(summary(result, Date.now() - started));
    return 0;
  } finally {
    dispose();
    await services.close();
  }
}

type Options = NonNullable<Parameters<typeof parseArgs>[0]>['options'];

function parse<T extends Options>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Ctrl-C or SIGTERM stops the run cleanly (state saved); a second Ctrl-C kills as usual. */
function stopOnSignals(): { stop: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onSignal = (): void => {
    dispose();
    controller.abort();
  };
  const dispose = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return { stop: controller.signal, dispose };
}

function summary(result: SimRunResult, elapsedMs: number): string {
  const topics = Object.entries(result.byTopic)
    .map(([topic, n]) => `${topic} ${n}`)
    .join(', ');
  return (
    `produced ${result.records} records (${topics || 'none'}) for ` +
    `${new Date(result.startMs).toISOString()} .. ${new Date(result.endMs).toISOString()} ` +
    `in ${(elapsedMs / 1000).toFixed(1)} s\n`
  );
}

function positiveNumber(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(n > 0)) throw new UsageError(`${flag} must be a positive number, got "${text}"`);
  return n;
}

function positiveInteger(flag: string, text: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`${flag} must be a positive integer, got "${text}"`);
  return Number(text);
}

function integer(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${flag} must be an integer, got "${text}"`);
  }
  return Number(text);
}

function isoTime(flag: string, text: string): number {
  const ms = parseIsoTime(text);
  if (ms === null) throw new UsageError(`${flag} must be an ISO-8601 time with offset like 2025-01-31T12:00:00Z, got "${text}"`);
  return ms;
}
