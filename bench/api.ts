import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import Koa from 'koa';
import { pino } from 'pino';
import { createApi, type Api } from '../api/app.ts';
import { issueApiKey } from '../api/keys.ts';
import { SCOPE_NAMES } from '../api/scopes.ts';
import { onWorkerThread } from '../cli/roles/worker-thread.ts';
import { openLogServices, type LogServices } from '../infra/bootstrap.ts';
import { loadConfig, type Config } from '../infra/config.ts';
import { seedHistory } from '../infra/feeds/sim/runner.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { column, sql, table, type Sql } from '../infra/store/sql-literal.ts';
import { PROJECTIONS } from '../projections/index.ts';
import { openStore } from '../projections/open-store.ts';
import { replayProjections } from '../projections/runtime/replay.ts';
import type { ProjectionTables } from '../projections/tables.ts';
import { latestSnapshots, RULE_FIELDS } from '../projections/tables/quant.ts';
import { authorMetrics } from '../projections/tables/social.ts';
import { SCORE_NAMES } from '../schemas/records/primitives.ts';
import { startClickHouseServer } from '../infra/peers/clickhouse-server.ts';
import { projectToEnd, runQuantToEnd } from '../test/helpers/pipeline.ts';
import type { LoadSpec } from './api-load.ts';
import { listen, LoadClient, summarise, type Stats } from './load-client.ts';
import { atLeast, atMost, report, shareOfBaseline } from './results.ts';

const DAYS = Number(process.env.BENCH_API_DAYS ?? 1);
const CONNECTIONS = Number(process.env.BENCH_API_CONNECTIONS ?? 16);
const DURATION_MS = Number(process.env.BENCH_API_SECONDS ?? 5) * 1000;
const STORES = (process.env.BENCH_API_STORES ?? 'duckdb,duckdb-thread,clickhouse').split(',');
const WARMUP_MS = 1000;
/**
 * A Team key may send 2000 requests a minute, far below what one process serves: the load is
 * spread over this many keys so that the limiter runs on every request but never refuses.
 */
const KEYS = 1024;

/** The targets: the hot endpoint against hello-world, and reads that miss every cache. */
const HOT_SHARE = shareOfBaseline(0.5);
const HOT_P99 = atMost(20, 'ms');
const READ_RATE = 2_000;
const READ_P99 = atMost(50, 'ms');
/**
 * Sampling interval of the event-loop delay, ms. The histogram records whole intervals
 * between samples; the interval is taken off, leaving how late each sample came.
 */
const LOOP_RESOLUTION_MS = 1;

/**
 * The REST API over a real socket on a simulated world (the default 500 tokens and 3,000
 * authors, BENCH_API_DAYS of history through the engine and the projections), on each store
 * of BENCH_API_STORES, loaded by a child process holding CONNECTIONS keep-alive connections,
 * each sending its next request when the previous one is answered. Baselines served by the
 * same process and loaded by the same client: a Koa hello-world route, and a route that only
 * sends `SELECT 1` to the store. Then the token snapshot at half the rate it reached, and each
 * read that misses the caches at half its target rate. The event-loop delay of the serving
 * process is recorded during every load.
 */
export async function benchApi(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-api-'));
  const logger = pino({ level: 'warn' });
  const config = loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'never', LOG_LEVEL: 'warn' });
  const services = await openLogServices(config, logger);
  const client = new LoadClient();
  try {
    const { log, codec } = services;
    const seeded = await seedHistory({ log, codec, dataDir: dir, seed: 7, days: DAYS, endMs: Date.now() });
    const keys: string[] = [];
    for (let i = 0; i < KEYS; i++) keys.push((await issueApiKey(log, codec, { name: `bench ${i}`, plan: 'team', scopes: SCOPE_NAMES, teamId: null })).key);
    await runQuantToEnd(dir, log, codec);
    process.stdout.write(
      `${DAYS} day(s) of the default world: ${seeded.records.toLocaleString('en-US')} input events; ` +
        `${CONNECTIONS} connections, ${DURATION_MS / 1000} s per row after ${WARMUP_MS / 1000} s of warm-up\n`,
    );
    for (const name of STORES) {
      process.stdout.write(`\n${name}\n`);
      if (name === 'duckdb') {
        const store = await openStore(config, logger);
        try {
          await projectToEnd(config, log, codec, store);
          await measureStore(name, store, services, keys, client);
        } finally {
          await store.close();
        }
      } else if (name === 'duckdb-thread') {
        // As `tqa start` serves it: the projections' thread holds the store, the API reads through a port.
        const projected = await openStore(config, logger);
        await projectToEnd(config, log, codec, projected).finally(() => projected.close());
        const projections = onWorkerThread('projections', new URL('../cli/roles/projections.ts', import.meta.url), 'projectionsRole', { holdsStore: true });
        let shared: AnalyticalStore<ProjectionTables> | undefined;
        const notOpened = () => Promise.reject(new Error('the projections thread shares the store'));
        const running = await projections.start({ config, logger, services, store: notOpened, shareStore: (s) => (shared = s), stdout: process.stdout });
        try {
          await measureStore(name, shared!, services, keys, client);
        } finally {
          await running.stop();
          await shared?.close();
        }
      } else if (name === 'clickhouse') {
        const server = await startClickHouseServer();
        const chConfig: Config = { ...config, TQA_STORE: 'clickhouse', CLICKHOUSE_URL: server.url, CLICKHOUSE_DATABASE: `bench_${randomUUID().slice(0, 8)}` };
        const store = await openStore(chConfig, logger);
        try {
          // The live projections' groups already committed the whole log into the first store.
          await replayProjections({ projections: PROJECTIONS, log, codec, store, logger, runId: 'bench-api' });
          await measureStore(name, store, services, keys, client);
        } finally {
          await store.close();
          await server.stop();
        }
      } else throw new Error(`BENCH_API_STORES: unknown store ${name}`);
    }
  } finally {
    client.close();
    await services.close();
    await rm(dir, { recursive: true, force: true });
  }
}

interface Row {
  name: string;
  spec: LoadSpec;
}

interface Measured extends Stats {
  /** Event-loop delay of this process while the load was measured, ms. */
  loopP99: number;
  loopMax: number;
}

async function measureStore(
  storeName: string,
  store: AnalyticalStore<ProjectionTables>,
  { log, codec }: LogServices,
  keys: string[],
  client: LoadClient,
): Promise<void> {
  const servers: Server[] = [];
  let api: Api | null = null;
  try {
    const tokenIds = await strings(
      store,
      sql`SELECT ${column(latestSnapshots, 'token_id')} AS v FROM ${table(latestSnapshots)} ORDER BY ${column(latestSnapshots, 'token_id')} LIMIT 64`,
    );
    const handles = await strings(
      store,
      sql`SELECT DISTINCT ${column(authorMetrics, 'handle')} AS v FROM ${table(authorMetrics)} ORDER BY v LIMIT 1000`,
    );
    if (tokenIds.length === 0 || handles.length === 0) throw new Error('the world has no token snapshots or no author metrics to read');

    api = createApi({ log, codec, store, logger: pino({ level: 'warn' }), startedAt: Date.now() });
    const apiBase = await listen(api.app.callback(), servers);
    const hello = new Koa();
    hello.use((ctx) => {
      ctx.body = { hello: 'world' };
    });
    const helloBase = await listen(hello.callback(), servers);
    const ping = new Koa();
    ping.use(async (ctx) => {
      ctx.body = await store.query(sql`SELECT 1 AS one`);
    });
    const pingBase = await listen(ping.callback(), servers);

    const common = { connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS };
    const keyed = (name: string, method: LoadSpec['method'], paths: string[], bodies?: string[]): Row => ({
      name,
      spec: { ...common, base: apiBase, method, paths, keys, bodies },
    });
    // Identical listings within a second share one answer (api/services/read-cache.ts): these
    // rows cycle through enough distinct queries (every sort field × limits 1–100) that a query
    // comes round again only after several seconds, so each one reaches the store. Signals and
    // authors have no cache; their rows vary the query all the same.
    const limits = Array.from({ length: 100 }, (_, i) => i + 1);
    const distinctLists = RULE_FIELDS.flatMap((sort) => limits.map((limit) => `/v1/quant/tokens?sort=${sort}&limit=${limit}`));
    const distinctScans = RULE_FIELDS.flatMap((sort) => limits.map((limit) => JSON.stringify({ preset: 'broad-momentum', sort, limit })));
    const feeds = SCORE_NAMES.flatMap((score) =>
      Array.from({ length: 20 }, (_, i) => ['active', 'all'].map((status) => `/v1/quant/signals?min_score=${score}:${i * 5}&status=${status}`)).flat(),
    );
    const helloRow: Row = { name: 'Koa hello-world (baseline)', spec: { ...common, base: helloBase, method: 'GET', paths: ['/'], keys: [null] } };
    const pingRow: Row = { name: 'SELECT 1 through Koa (baseline)', spec: { ...common, base: pingBase, method: 'GET', paths: ['/'], keys: [null] } };
    const token = keyed('GET /v1/quant/token/{token}', 'GET', tokenIds.map((id) => `/v1/quant/token/${id}`));
    const misses = [
      keyed(`GET /v1/quant/tokens, ${distinctLists.length} distinct queries`, 'GET', distinctLists),
      keyed(`POST /v1/quant/scan, ${distinctScans.length} distinct bodies`, 'POST', ['/v1/quant/scan'], distinctScans),
      keyed(`GET /v1/quant/signals, ${feeds.length} distinct filters`, 'GET', feeds),
      keyed(`GET /v1/quant/users/{handle}, ${handles.length} authors`, 'GET', handles.map((h) => `/v1/quant/users/${encodeURIComponent(h)}`)),
    ];
    const rows: Row[] = [
      helloRow,
      pingRow,
      keyed('GET /v1/key', 'GET', ['/v1/key']),
      token,
      keyed('GET /v1/quant/tokens?limit=25', 'GET', ['/v1/quant/tokens?limit=25']),
      keyed('POST /v1/quant/scan (broad-momentum)', 'POST', ['/v1/quant/scan'], [JSON.stringify({ preset: 'broad-momentum' })]),
      ...misses,
    ];

    const run = async (spec: LoadSpec): Promise<Measured> => {
      const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
      const warm = setTimeout(() => loop.enable(), spec.warmupMs);
      const stats = summarise(await client.run(spec));
      clearTimeout(warm);
      loop.disable();
      const late = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);
      return { ...stats, loopP99: late(loop.percentile(99)), loopMax: late(loop.max) };
    };
    printHeader();
    const measured = new Map<Row, Measured>();
    for (const row of rows) {
      const m = await run(row.spec);
      measured.set(row, m);
      printRow(row.name, m, measured.get(helloRow)!.rps);
    }
    const baseline = measured.get(helloRow)!;
    const half = Math.max(1, Math.floor(measured.get(token)!.rps / 2));
    const tokenHalf = await run({ ...token.spec, rate: half });
    printRow(`GET /v1/quant/token/{token} at ${half} req/s`, tokenHalf, baseline.rps);
    const missesHalf = new Map<Row, Measured>();
    for (const row of misses) {
      const m = await run({ ...row.spec, rate: READ_RATE / 2 });
      missesHalf.set(row, m);
      printRow(`${row.name.split(',')[0]} at ${READ_RATE / 2} req/s`, m, baseline.rps);
    }

    const errors = (m: Measured) => (m.errors === 0 ? undefined : `${m.errors} errors (${m.statuses})`);
    const t = measured.get(token)!;
    report({ figure: `GET token snapshot, ${storeName}`, value: t.rps, unit: 'req/s', baseline: { name: 'Koa hello-world', value: baseline.rps }, target: HOT_SHARE, note: errors(t) });
    report({ figure: `GET token snapshot p99 at ${half} req/s (half its rate), ${storeName}`, value: tokenHalf.p99, unit: 'ms', target: HOT_P99, note: errors(tokenHalf) });
    const select1 = { name: 'SELECT 1 through Koa', value: measured.get(pingRow)!.rps };
    for (const row of misses) {
      const [m, h] = [measured.get(row)!, missesHalf.get(row)!];
      report({ figure: `${row.name}, ${storeName}`, value: m.rps, unit: 'req/s', baseline: select1, target: atLeast(READ_RATE, 'req/s'), note: errors(m) });
      report({ figure: `${row.name.split(',')[0]} p99 at ${READ_RATE / 2} req/s, ${storeName}`, value: h.p99, unit: 'ms', target: READ_P99, note: errors(h) });
    }
    // The worst of the cache-missing loads, against the same process serving hello-world.
    const worst = misses.reduce((w, row) => (measured.get(row)!.loopP99 > measured.get(w)!.loopP99 ? row : w));
    const maxLoop = Math.max(...misses.map((row) => measured.get(row)!.loopMax));
    const during = `during ${worst.name.split(',')[0]}`;
    report({ figure: `event-loop delay p99, worst cache-missing load, ${storeName}`, value: measured.get(worst)!.loopP99, unit: 'ms', baseline: { name: 'during hello-world', value: baseline.loopP99 }, note: during });
    report({ figure: `event-loop delay max, cache-missing loads, ${storeName}`, value: maxLoop, unit: 'ms', baseline: { name: 'during hello-world', value: baseline.loopMax } });
  } finally {
    for (const server of servers) await new Promise<void>((resolve) => server.close(() => resolve()));
    await api?.close();
  }
}

/** The strings of column `v`. */
async function strings(store: AnalyticalStore<ProjectionTables>, statement: Sql): Promise<string[]> {
  return (await store.query<{ v: string }>(statement)).map((r) => r.v);
}

function printHeader(): void {
  process.stdout.write(
    `${'route'.padEnd(52)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'vs hello'.padStart(10)}${'loop p99'.padStart(10)}${'loop max'.padStart(10)}  errors\n`,
  );
}

function printRow(name: string, s: Measured, baseline: number): void {
  const errors = s.errors === 0 ? '0' : `${s.errors} (${s.statuses})`;
  process.stdout.write(
    `${name.padEnd(52)}${Math.round(s.rps).toString().padStart(9)}${s.p50.toFixed(2).padStart(9)}${s.p99.toFixed(2).padStart(9)}` +
      `${`${((s.rps / baseline) * 100).toFixed(1)}%`.padStart(10)}${s.loopP99.toFixed(1).padStart(10)}${s.loopMax.toFixed(1).padStart(10)}  ${errors}\n`,
  );
}
