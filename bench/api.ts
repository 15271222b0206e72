import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { pino } from 'pino';
import { createApi, type Api } from '../api/app.ts';
import { issueApiKey } from '../api/keys.ts';
import { SCOPE_NAMES } from '../api/scopes.ts';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { seedHistory } from '../infra/feeds/sim/runner.ts';
import { openStore } from '../projections/open-store.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { column, sql, table } from '../infra/store/sql-literal.ts';
import type { ProjectionTables } from '../projections/tables.ts';
import { latestSnapshots, RULE_FIELDS } from '../projections/tables/quant.ts';
import { projectToEnd, runEngineToEnd } from '../test/helpers/pipeline.ts';
import type { LoadResult, LoadSpec } from './api-load.ts';

const DAYS = Number(process.env.BENCH_API_DAYS ?? 1);
const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 16);
const DURATION_MS = Number(process.env.BENCH_API_SECONDS ?? 5) * 1000;
const WARMUP_MS = 1000;
/**
 * A Team key may send 2000 requests a minute, far below what one process serves: the load is
 * spread over this many keys so that the limiter runs on every request but never refuses.
 */
const KEYS = 1024;

/**
 * The REST API over a real socket on a simulated world (the default 500 tokens and 3,000
 * authors, BENCH_API_DAYS of history through the engine and the projections), against a Koa
 * hello-world route served by the same process and loaded by the same client: a child
 * process holding CONNECTIONS keep-alive connections, each sending its next request when the
 * previous one is answered. Then the token snapshot again at half the rate it reached, where
 * the target is p99 ≤ 20 ms.
 */
export async function benchApi(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-api-'));
  const logger = pino({ level: 'warn' });
  const config = loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'never' });
  const services = await openLogServices(config, logger);
  const servers: Server[] = [];
  let store: AnalyticalStore<ProjectionTables> | null = null;
  let api: Api | null = null;
  let client: LoadClient | null = null;
  try {
    const { log, codec } = services;
    const seeded = await seedHistory({ log, codec, dataDir: dir, seed: 7, days: DAYS, endMs: Date.now() });
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) keys.push((await issueApiKey(log, codec, { name: `bench ${i}`, plan: 'team', scopes: SCOPE_NAMES, teamId: null })).key);
    await runEngineToEnd(dir, log, codec);
    store = await openStore(config, logger);
    await projectToEnd(config, log, codec, store);
    const tokenIds = (
      await store.query<{ token_id: string }>(
        sql`SELECT ${column(latestSnapshots, 'token_id')} FROM ${table(latestSnapshots)} ORDER BY ${column(latestSnapshots, 'token_id')} LIMIT 64`,
      )
    ).map((r) => r.token_id);
    process.stdout.write(
      `${DAYS} day(s) of the default world: ${seeded.records.toLocaleString('en-US')} input events; ` +
        `${CONNECTIONS} connections, ${DURATION_MS / 1000} s per row after ${WARMUP_MS / 1000} s of warm-up\n`,
    );

    api = createApi({ log, store, logger, startedAt: Date.now() });
    const apiBase = await listen(api.app.callback(), servers);
    const hello = new Koa();
    hello.use((ctx) => {
      ctx.body = { hello: 'world' };
    });
    const helloBase = await listen(hello.callback(), servers);
    client = new LoadClient();

    const common = { connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS };
    const keyed = (name: string, method: LoadSpec['method'], paths: string[], bodies?: string[]): Row => ({
      name,
      spec: { ...common, base: apiBase, method, paths, keys, bodies },
    });
    // Identical listings within a second share one answer (api/services/read-cache.ts): these
    // rows cycle through enough distinct queries (every sort field × limits 1–100) that a query
    // comes round again only after several seconds, so each one reaches the store.
    const limits = Array.from({ length: 100 }, (_, i) => i + 1);
    const distinctLists = RULE_FIELDS.flatMap((sort) => limits.map((limit) => `/v1/quant/tokens?sort=${sort}&limit=${limit}`));
    const distinctScans = RULE_FIELDS.flatMap((sort) => limits.map((limit) => JSON.stringify({ preset: 'broad-momentum', sort, limit })));
    const token = keyed('GET /v1/quant/token/{token}', 'GET', tokenIds.map((id) => `/v1/quant/token/${id}`));
    const rows: Row[] = [
      { name: 'Koa hello-world (baseline)', spec: { ...common, base: helloBase, method: 'GET', paths: ['/'], keys: [null] } },
      keyed('GET /v1/key', 'GET', ['/v1/key']),
      token,
      keyed('GET /v1/quant/tokens?limit=25', 'GET', ['/v1/quant/tokens?limit=25']),
      keyed(`GET /v1/quant/tokens, ${distinctLists.length} distinct queries`, 'GET', distinctLists),
      keyed('POST /v1/quant/scan (broad-momentum)', 'POST', ['/v1/quant/scan'], [JSON.stringify({ preset: 'broad-momentum' })]),
      keyed(`POST /v1/quant/scan, ${distinctScans.length} distinct bodies`, 'POST', ['/v1/quant/scan'], distinctScans),
    ];
    printHeader();
    let baseline = 0;
    let tokenRate = 0;
    for (const row of rows) {
      const stats = summarise(await client.run(row.spec));
      baseline ||= stats.rps;
      if (row === token) tokenRate = stats.rps;
      printRow(row.name, stats, baseline);
    }
    const half = Math.max(1, Math.floor(tokenRate / 2));
    printRow(`GET /v1/quant/token/{token} at ${half} req/s`, summarise(await client.run({ ...token.spec, rate: half })), baseline);
    process.stdout.write('targets (DESIGN.md): token snapshot ≥ 30% of hello-world req/s; p99 ≤ 20 ms at half saturation\n');
  } finally {
    client?.close();
    for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
    await api?.close();
    await store?.close();
    await services.close();
    await rm(dir, { recursive: true, force: true });
  }
}

interface Row {
  name: string;
  spec: LoadSpec;
}

interface Stats {
  rps: number;
  p50: number;
  p99: number;
  /** Answers other than 2xx, and requests without an answer. */
  errors: number;
  statuses: string;
}

async function listen(handler: RequestListener, servers: Server[]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The forked load generator (bench/api-load.ts), one load spec at a time. */
class LoadClient {
  private readonly child: ChildProcess = fork(new URL('./api-load.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'] });

  run(spec: LoadSpec): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`load generator exited with code ${code}`));
      this.child.once('exit', onExit);
      this.child.once('message', (result) => {
        this.child.off('exit', onExit);
        resolve(result as LoadResult);
      });
      this.child.send(spec);
    });
  }

  close(): void {
    this.child.kill();
  }
}

function summarise(result: LoadResult): Stats {
  const sorted = [...result.latenciesMs].sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  const ok = Object.entries(result.statuses).reduce((n, [status, count]) => (status.startsWith('2') ? n + count : n), 0);
  return {
    rps: sorted.length / (result.elapsedMs / 1000),
    p50: at(0.5),
    p99: at(0.99),
    errors: sorted.length - ok + result.failures,
    statuses: Object.entries(result.statuses)
      .map(([status, count]) => `${status}×${count}`)
      .join(' '),
  };
}

function printHeader(): void {
  process.stdout.write(`${'route'.padEnd(52)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'vs hello'.padStart(10)}  errors\n`);
}

function printRow(name: string, s: Stats, baseline: number): void {
  const errors = s.errors === 0 ? '0' : `${s.errors} (${s.statuses})`;
  process.stdout.write(
    `${name.padEnd(52)}${Math.round(s.rps).toString().padStart(9)}${s.p50.toFixed(2).padStart(9)}${s.p99.toFixed(2).padStart(9)}` +
      `${`${((s.rps / baseline) * 100).toFixed(1)}%`.padStart(10)}  ${errors}\n`,
  );
}
