import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../projections/usage-error.ts';
import { backtestCommand } from '../../cli/commands/backtest.ts';
import { exportCommand } from '../../cli/commands/export.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import { int64, sql, table } from '../../infra/store/sql-literal.ts';
import { openStore } from '../../projections/open-store.ts';
import { snapshotHistory } from '../../projections/tables/quant.ts';
import { WORLD } from '../helpers/api-world.ts';
import { runCommand } from '../helpers/cli.ts';
import { freePorts } from '../../infra/peers/clickhouse-server.ts';
import { signalGroup } from '../../infra/peers/peer-process.ts';
import { projectToEnd, runQuantToEnd } from '../helpers/pipeline.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * `tqa backtest` and `tqa export` on a data dir holding a simulated world: a backtest run
 * from the command line on the store, the same request through a running service's API
 * (which holds the DuckDB file) giving the same result, and the events and the history
 * written to Parquet and CSV that DuckDB reads back with their types.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ARGS = ['--rules', '[{"field":"momentum","op":">=","value":40}]', '--horizon', '24h', '--dead-token-policy', 'total_loss'];
let dir: string;
let config: Config;
let service: ChildProcess | null = null;

async function readBack(query: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(query)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-research-cli-'));
  config = loadConfig({ TQA_DATA_DIR: dir });
  const { log, codec } = await openEmbedded(dir);
  await seedHistory({ log, codec, dataDir: dir, seed: WORLD.seed, days: WORLD.days, endMs: WORLD.endMs, tokens: WORLD.tokens, authors: WORLD.authors });
  await runQuantToEnd(dir, log, codec);
  const store = await openStore(config, silentLogger);
  await projectToEnd(config, log, codec, store);
  await store.close();
  await log.close();
}, 600_000);

afterAll(async () => {
  if (service) {
    const exited = new Promise((resolve) => service!.once('exit', resolve));
    signalGroup(service, 'SIGKILL');
    await exited;
  }
  await rm(dir, { recursive: true, force: true });
});

describe('tqa backtest and tqa export', () => {
  let local: any;

  it('runs a backtest on the store and prints it as JSON, its events to Parquet and CSV', async () => {
    const parquet = join(dir, 'events.parquet');
    local = JSON.parse(await runCommand(backtestCommand, config, [...ARGS, '--json', '--export-events', parquet]));
    expect(local.n).toBe(local.events.length);
    expect(local.n).toBeGreaterThan(0);
    const rows = await readBack(`SELECT count(*)::INT AS n, min(typeof(entry_at)) AS t, sum("return") AS r FROM read_parquet('${parquet}')`);
    expect(rows[0]).toMatchObject({ n: local.n, t: 'TIMESTAMP' });
    expect(rows[0].r).toBeCloseTo(local.events.reduce((s: number, e: { return: number }) => s + e.return, 0), 9);

    const csv = join(dir, 'events.csv');
    await runCommand(backtestCommand, config, [...ARGS, '--export-events', csv]);
    const lines = (await readFile(csv, 'utf8')).trim().split('\n');
    expect(lines[0].split(',').slice(0, 4)).toEqual(['token_id', 'chain', 'entry_at', 'entry_price']);
    expect(lines.length - 1).toBe(local.n);
  }, 120_000);

  it('prints the table with the baseline, warnings and the disclaimer', async () => {
    const out = await runCommand(backtestCommand, config, ARGS);
    expect(out).toMatch(/^hit rate 95% \(Wilson\)\s+\S+/m);
    expect(out).toMatch(new RegExp(`^N\\s+${local.n}\\s+${local.baseline.n}$`, 'm'));
    expect(out).toContain(local.disclaimer);
  }, 120_000);

  it('refuses bad options as the API refuses bad bodies', async () => {
    const run = (args: string[]) => backtestCommand.run(args, { config, logger: silentLogger, stdout: sink().stream, stderr: sink().stream });
    await expect(run(['--rules', '[]', '--horizon', '24h'])).rejects.toThrow(UsageError);
    await expect(run(['--rules', 'momentum>1', '--horizon', '24h'])).rejects.toThrow(UsageError);
    await expect(run([...ARGS.slice(0, 2), '--horizon', '2h'])).rejects.toThrow(/horizon/);
    await expect(run([...ARGS, '--export-events', 'out.xlsx'])).rejects.toThrow(UsageError);
  });

  it('exports a window of snapshot history with every rule field', async () => {
    const out = join(dir, 'history.parquet');
    const from = WORLD.endMs - 86_400_000;
    await runCommand(exportCommand, config, ['history', '--from', new Date(from).toISOString(), '--to', String(WORLD.endMs / 1000), '--out', out]);
    const store = await openStore(config, silentLogger);
    const [stored] = await store.query<{ n: number }>(sql`SELECT count(*) AS n FROM ${table(snapshotHistory)} WHERE ts >= ${int64(from)} AND ts <= ${int64(WORLD.endMs)}`);
    await store.close();
    const [read] = await readBack(`SELECT count(*)::INT AS n, min(ts) AS first, count(momentum)::INT AS m FROM read_parquet('${out}')`);
    expect(read.n).toBe(Number(stored.n));
    expect(read.n).toBeGreaterThan(0);
    expect((read.first as Date).getTime()).toBeGreaterThanOrEqual(from);
    expect(read.m).toBeGreaterThan(0);
  }, 120_000);

  it('goes through the API while the service holds the store, with the same result, and exports that run from the log', async () => {
    const [port, streamPort] = await freePorts(2);
    const env = { ...process.env, TQA_DATA_DIR: dir, PORT: String(port), STREAM_PORT: String(streamPort), TQA_SIM: 'off', LOG_LEVEL: 'warn' };
    service = spawn(process.execPath, ['bin/tqa.js', 'start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'ignore', 'ignore'] });
    const { key } = JSON.parse(await runCommand(keysCommand, config, ['create', '--plan', 'pro', '--name', 'cli', '--json'])) as { key: string };
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/v1/health`).catch(() => null))?.status === 200, 'the API', 60_000);
    const running = { ...config, PORT: port };
    const err = sink();
    const code = await backtestCommand.run([...ARGS, '--json', '--key', key], { config: running, logger: silentLogger, stdout: sink().stream, stderr: err.stream });
    expect(code, err.text()).toBe(0);
    const runId = /run (btr_[0-9a-f]{24}) through the API/.exec(err.text())?.[1];
    expect(runId, err.text()).toBeDefined();
    const out = sink();
    await backtestCommand.run([...ARGS, '--json', '--key', key], { config: running, logger: silentLogger, stdout: out.stream, stderr: sink().stream });
    expect(JSON.parse(out.text())).toEqual(local);

    const csv = join(dir, 'run.csv');
    await runCommand(exportCommand, running, ['run', runId!, '--out', csv]);
    expect((await readFile(csv, 'utf8')).trim().split('\n').length - 1).toBe(local.n);
  }, 180_000);
});
