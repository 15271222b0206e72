import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { BatchedWriter } from '../infra/store/batched-writer.ts';
import { ClickHouseStore } from '../infra/store/clickhouse-store.ts';
import { DuckDbStore } from '../infra/store/duckdb-store.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { column, columns, sql, table, type Sql } from '../infra/store/sql-literal.ts';
import { migrationsDir } from '../projections/migrations/index.ts';
import { MAX_SNAPSHOT_GAP_MS, SNAPSHOT_GRID_MS } from '../processors/quant-engine/features/features.ts';
import { getSignal, signalFeed } from '../projections/read-models/signals.ts';
import { scan } from '../projections/read-models/scan.ts';
import { listTokens } from '../projections/read-models/tokens.ts';
import { PROJECTION_TABLES, snapshots, type ProjectionTables, type SnapshotRow } from '../projections/tables.ts';
import { RULE_FIELDS, type LatestSnapshotRow, type SignalRow, type SnapshotHistoryRow } from '../projections/tables/quant.ts';
import { SCORE_NAMES } from '../schemas/records/primitives.ts';
import { seededRandom } from '../infra/feeds/sim/prng.ts';
import { startClickHouseServer } from '../infra/peers/clickhouse-server.ts';
import { report } from './results.ts';

const TOKENS = 1_000;
const PER_TOKEN = 100;
const ROWS = TOKENS * PER_TOKEN;
/** What a projection hands the writer per batch handler call. */
const WRITE_CHUNK = 1_000;
const STEP_MS = 5 * 60 * 1000;
const T0 = 1_750_000_000_000;
const READS = 300;
const WARM_UP = 20;
const logger = pino({ level: 'silent' });
const FEATURE_NAMES = ['m5', 'm15', 'm60', 'v5', 'v60', 'authors', 'reach', 'price_chg', 'vol_chg', 'liq', 'mcap', 'crowd'];

/** 100k snapshot rows: 1,000 tokens on a 5-minute grid, a feature map of a dozen numbers each. */
function makeRows(): SnapshotRow[] {
  let seed = 7;
  const random = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const rows: SnapshotRow[] = [];
  for (let step = 0; step < PER_TOKEN; step++) {
    for (let t = 0; t < TOKENS; t++) {
      const features = Object.fromEntries(FEATURE_NAMES.map((k) => [k, random()]));
      rows.push({
        token_id: `tk_${t}`,
        ts: T0 + step * STEP_MS,
        version: 1,
        price_usd: random() * 10,
        momentum: random() * 2 - 1,
        crowding: t % 5 === 0 ? null : random(),
        has_market_data: t % 7 !== 0,
        features: JSON.stringify(features),
      });
    }
  }
  return rows;
}

async function writeThroughWriter(store: AnalyticalStore<ProjectionTables>, rows: SnapshotRow[]): Promise<number> {
  const writer = new BatchedWriter(store, { logger });
  const started = performance.now();
  for (let i = 0; i < rows.length; i += WRITE_CHUNK) writer.write('snapshots', rows.slice(i, i + WRITE_CHUNK));
  await writer.close();
  return rows.length / ((performance.now() - started) / 1000);
}

/** The baseline: the same rows as direct upserts of 10k, no buffering, validation or retries in between. */
async function writeDirect(store: AnalyticalStore<ProjectionTables>, rows: SnapshotRow[]): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < rows.length; i += 10_000) await store.upsert('snapshots', rows.slice(i, i + 10_000));
  return rows.length / ((performance.now() - started) / 1000);
}

interface Latency {
  p50: number;
  p99: number;
}

async function latencies(store: AnalyticalStore<ProjectionTables>, statement: (i: number) => Sql): Promise<Latency> {
  return timed((i) => store.query(statement(i)));
}

async function timed(read: (i: number) => Promise<unknown>): Promise<Latency> {
  for (let i = 0; i < WARM_UP; i++) await read(i);
  const times: number[] = [];
  for (let i = 0; i < READS; i++) {
    const started = performance.now();
    await read(i);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(times.length * 0.5)], p99: times[Math.floor(times.length * 0.99)] };
}

interface Figures {
  direct: number;
  writer: number;
  ping: Latency;
  point: Latency;
  top: Latency;
  readModels: [string, Latency][];
}

const SCANNED_TOKENS = 10_000;
const SIGNALS = 10_000;

/** 10k tokens' latest snapshots and 10k signals with random rule fields, for the API's read models. */
function readModelRows(): { snapshots: LatestSnapshotRow[]; signals: SignalRow[] } {
  const random = seededRandom(11);
  const value = () => (random() < 0.05 ? null : random() * 100);
  // A record of about the size the engine emits; the read models return it as stored.
  const body = JSON.stringify({ scoreDetails: Array.from({ length: 7 }, (_, i) => ({ score: i, drivers: [1, 2, 3, 4], reason: 'x'.repeat(40) })) });
  const snapshots = Array.from({ length: SCANNED_TOKENS }, (_, t) => {
    const row: Record<string, unknown> = {
      token_id: `tk_${t}`,
      ts: T0,
      symbol: `SYM${t % 997}`,
      chain: ['solana', 'base', 'eth', 'bnb', 'arc', 'robinhood'][t % 6],
      narrative: ['ai-agents', 'memes', 'defi', 'rwa', 'gaming', 'depin'][t % 6],
      divergence_state: 'aligned',
      snapshot: body,
    };
    for (const field of RULE_FIELDS) row[field] = value();
    return row as LatestSnapshotRow;
  });
  const signals = Array.from({ length: SIGNALS }, (_, i) => {
    const signal = {
      signalId: `sig_${i}`,
      ruleVersion: 'early_acceleration@1',
      tokenId: `tk_${i % 500}`,
      firedAt: T0 + i * 60_000,
      why: ['x'.repeat(60), 'y'.repeat(60)],
      body,
    };
    const row: Record<string, unknown> = {
      signal_id: signal.signalId,
      version: 1,
      type: ['EARLY_ACCELERATION', 'BROAD_ATTENTION', 'VELOCITY_3X'][i % 3],
      rule_version: signal.ruleVersion,
      status: i % 4 === 0 ? 'ended' : 'active',
      token_id: signal.tokenId,
      fired_at: signal.firedAt,
      ended_at: null,
      strength: random() * 100,
      market_cap_usd: random() * 1e7,
      liquidity_usd: random() * 1e6,
      record: JSON.stringify(signal),
    };
    for (const score of SCORE_NAMES) row[score] = value();
    return row as SignalRow;
  });
  return { snapshots, signals };
}

/**
 * The history the token list and the scanner read: each token's snapshots over the last hour
 * and a step (the stretch a read as of a time looks at), the newest being its latest snapshot.
 */
function historyRows(latest: readonly LatestSnapshotRow[]): SnapshotHistoryRow[] {
  const random = seededRandom(12);
  const steps = (MAX_SNAPSHOT_GAP_MS + SNAPSHOT_GRID_MS) / SNAPSHOT_GRID_MS;
  return Array.from({ length: steps }, (_, step) =>
    latest.map((row) => {
      const { symbol: _symbol, snapshot: _snapshot, ...fields } = row;
      const ts = row.ts - step * SNAPSHOT_GRID_MS;
      const history: Record<string, unknown> = { ...fields, ts, version: 1, snapshot_id: `snap_${row.token_id}_${ts}` };
      if (step > 0) for (const field of RULE_FIELDS) history[field] = random() * 100;
      return history as SnapshotHistoryRow;
    }),
  ).flat();
}

async function measureReadModels(store: AnalyticalStore<ProjectionTables>): Promise<[string, Latency][]> {
  const rows = readModelRows();
  await store.upsert('latest_snapshots', rows.snapshots);
  await store.upsert('snapshot_history', historyRows(rows.snapshots));
  await store.upsert('signals', rows.signals);
  const page = await listTokens(store, { sort: 'momentum', dir: 'desc', limit: 25 });
  return [
    ['tokens list, 25 by momentum', await timed(() => listTokens(store, { sort: 'momentum', dir: 'desc', limit: 25 }))],
    ['tokens list, next page', await timed(() => listTokens(store, { sort: 'momentum', dir: 'desc', limit: 25, cursor: page.nextCursor! }))],
    [
      `scan ${SCANNED_TOKENS / 1000}k tokens, 3 rules`,
      await timed(() =>
        scan(
          store,
          {
            rules: [
              { field: 'momentum', op: '>', value: 60 },
              { field: 'crowding', op: '<', value: 40 },
              { field: 'unique_authors_1h', op: '>=', value: 20 },
            ],
            sort: 'conviction',
            sortDir: 'desc',
            limit: 50,
          },
          T0,
        ),
      ),
    ],
    ['signal feed, active, min momentum', await timed(() => signalFeed(store, { status: 'active', minScore: { score: 'momentum', value: 50 }, limit: 25 }))],
    ['one signal with prior firings', await timed((i) => getSignal(store, `sig_${(i * 7919) % SIGNALS}`))],
  ];
}

async function measure(open: () => Promise<AnalyticalStore<ProjectionTables>>, rows: SnapshotRow[]): Promise<Figures> {
  // A fresh store each: the writer's figure must not profit from rows the baseline left.
  let store = await open();
  const direct = await writeDirect(store, rows);
  await store.close();
  store = await open();
  try {
    const writer = await writeThroughWriter(store, rows);
    const latest = T0 + (PER_TOKEN - 1) * STEP_MS;
    const ping = await latencies(store, () => sql`SELECT 1 AS one`);
    const [tokenId, ts, momentum] = (['token_id', 'ts', 'momentum'] as const).map((c) => column(snapshots, c));
    const point = await latencies(
      store,
      (i) =>
        sql`SELECT ${columns(snapshots)} FROM ${table(snapshots)}
            WHERE ${tokenId} = ${`tk_${(i * 7919) % TOKENS}`} ORDER BY ${ts} DESC LIMIT 1`,
    );
    const top = await latencies(
      store,
      () => sql`SELECT ${columns(snapshots)} FROM ${table(snapshots)} WHERE ${ts} = ${latest} ORDER BY ${momentum} DESC LIMIT 25`,
    );
    return { direct, writer, ping, point, top, readModels: await measureReadModels(store) };
  } finally {
    await store.close();
  }
}

const rate = (n: number): string => Math.round(n).toLocaleString('en-US').padStart(10);
const ms = (n: number): string => n.toFixed(2).padStart(8);

export async function benchStore(): Promise<void> {
  const rows = makeRows();
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-store-'));
  const server = await startClickHouseServer();
  try {
    let n = 0;
    const duckdb = await measure(async () => {
      const store = await DuckDbStore.open({
        path: join(dir, `store-${n++}.duckdb`),
        tables: PROJECTION_TABLES,
        migrationsDir: migrationsDir('duckdb'),
        logger,
      });
      await store.migrate();
      return store;
    }, rows);
    const clickhouse = await measure(async () => {
      const store = new ClickHouseStore({
        url: server.url,
        database: `bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`,
        tables: PROJECTION_TABLES,
        migrationsDir: migrationsDir('clickhouse'),
        logger,
      });
      await store.migrate();
      return store;
    }, rows);

    const out = process.stdout;
    const shape = `${TOKENS} tokens x ${PER_TOKEN} times`;
    out.write(`${ROWS.toLocaleString('en-US')} snapshot rows (${shape}), given to the writer ${WRITE_CHUNK} at a time\n`);
    out.write(`${'store'.padEnd(12)}${'direct/s'.padStart(10)}${'writer/s'.padStart(10)}  writer/direct\n`);
    for (const [name, f] of [['duckdb', duckdb], ['clickhouse', clickhouse]] as const) {
      out.write(`${name.padEnd(12)}${rate(f.direct)}${rate(f.writer)}  ${(f.writer / f.direct).toFixed(2)}\n`);
    }
    out.write(`\nread latency over ${READS} queries, ms (ratio: p50 / p50 of SELECT 1 on the same store)\n`);
    out.write(`${'store'.padEnd(12)}${'query'.padEnd(36)}${'p50'.padStart(8)}${'p99'.padStart(8)}  ratio\n`);
    for (const [name, f] of [['duckdb', duckdb], ['clickhouse', clickhouse]] as const) {
      const lines = [
        ['SELECT 1', f.ping],
        ['latest snapshot of one token', f.point],
        ['latest 25 by momentum', f.top],
        ...f.readModels,
      ] as const;
      for (const [label, l] of lines) {
        out.write(`${name.padEnd(12)}${label.padEnd(36)}${ms(l.p50)}${ms(l.p99)}  ${(l.p50 / f.ping.p50).toFixed(1)}\n`);
      }
    }
    for (const [name, f] of [['duckdb', duckdb], ['clickhouse', clickhouse]] as const) {
      report({ figure: `batched writer, ${name}`, value: f.writer, unit: 'rows/s', baseline: { name: 'direct upserts', value: f.direct } });
      for (const [label, l] of f.readModels) {
        report({ figure: `${label} p50, ${name}`, value: l.p50, unit: 'ms', baseline: { name: 'SELECT 1 p50', value: f.ping.p50 } });
      }
    }
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
