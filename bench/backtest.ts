import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { pino } from 'pino';
import { ClickHouseStore } from '../infra/store/clickhouse-store.ts';
import { DuckDbStore } from '../infra/store/duckdb-store.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { column, sql, table } from '../infra/store/sql-literal.ts';
import { migrationsDir } from '../projections/migrations/index.ts';
import { PROJECTION_TABLES, type ProjectionTables } from '../projections/tables.ts';
import { RULE_FIELDS, snapshotHistory } from '../projections/tables/quant.ts';
import { runBacktest } from '../research/backtest/run.ts';
import { normaliseBacktestSpec } from '../research/backtest/spec.ts';
import { EVENT_STUDY_REFRESH_MS, refreshEventStudies, refreshTime } from '../research/event-studies/compute.ts';
import { storeHistory } from '../research/history/store.ts';
import { startClickHouseServer } from '../infra/peers/clickhouse-server.ts';
import { report } from './results.ts';

/**
 * A backtest over 30 days x 1,000 tokens x 5-minute snapshots (8.6M snapshot_history rows)
 * on each store, against the baseline of one scan of the same rows (count and sum of a
 * column); then the six event studies computed from scratch, and one hourly refresh
 * continuing from them. Rows are generated inside each store by one INSERT ... SELECT in time
 * order, as projections write them (the fast path: the bench measures reads, not writes).
 */

const TOKENS = Number(process.env.BENCH_BACKTEST_TOKENS ?? 1_000);
const DAYS = 30;
const STEP_MS = 5 * 60_000;
const STEPS = (DAYS * 86_400_000) / STEP_MS;
const T0 = Date.UTC(2026, 0, 1);
const logger = pino({ level: 'silent' });

/**
 * Field → SQL of its value, from `u(k)` (uniform noise in [0, 1) for the row and k) and
 * `burst` (1 on about one snapshot in 2,000: a burst of attention, else 0) and `cooling` (as
 * rare: a talked-about token gone quiet). Social fields are quiet outside them, so the signal rules behind the event studies fire about as rarely as
 * they do in the simulated world; the scores are plain noise for the backtest's rule.
 */
const FIELDS: Record<string, (u: (k: number) => string, burst: string, cooling: string) => string> = {
  momentum: (u) => `${u(1)} * 100`,
  crowding: (u) => `${u(2)} * 100`,
  quality_weighted_attention_1h: (u, burst) => `${burst} * 2.5 + ${u(3)}`,
  mention_velocity_1h: (u, burst) => `${burst} * 3.5 + ${u(4)}`,
  mention_velocity_15m: (u, burst) => `${burst} * 3 + ${u(5)}`,
  unique_authors_1h: (u, burst) => `${burst} * 10 + floor(${u(6)} * 3)`,
  unique_authors_24h: (u, burst) => `${burst} * 50 + floor(${u(7)} * 20)`,
  new_author_share_1h: (u, burst) => `${burst} * 0.5 + ${u(8)} * 0.5`,
  mentions_15m: (u, burst) => `${burst} * 5 + floor(${u(9)} * 3)`,
  mentions_1h: (u, burst) => `${burst} * 8 + floor(${u(10)} * 3)`,
  mentions_24h: (u, burst, cooling) => `(${burst} + ${cooling}) * 60 + floor(${u(11)} * 40)`,
  price_change_1h: (u) => `(${u(12)} - 0.5) * 0.1`,
  price_change_24h: (u) => `(${u(13)} - 0.3) * 1.2`,
  volume_acceleration: (u) => `${u(14)} * 4`,
};

/** The SELECT producing every row, in a dialect: `uniform(k)` is the field's noise. */
export function generator(dialect: 'duckdb' | 'clickhouse', firstStep = 0, steps = STEPS): string {
  const uniform = (k: number): string =>
    dialect === 'duckdb' ? `((hash(t, s, ${k}) % 1000000) / 1e6)` : `((cityHash64(t, s, ${k}) % 1000000) / 1e6)`;
  const columns = snapshotHistory.columns.map((c) => c.name);
  const values: Record<string, string> = {
    token_id: dialect === 'duckdb' ? `'tk_' || t` : `concat('tk_', toString(t))`,
    ts: `${T0} + s * ${STEP_MS}`,
    version: '1',
    snapshot_id: dialect === 'duckdb' ? `'snap_' || t || '_' || s` : `concat('snap_', toString(t), '_', toString(s))`,
    chain: dialect === 'duckdb' ? `['solana', 'base', 'eth', 'bnb'][1 + t % 4]` : `['solana', 'base', 'eth', 'bnb'][1 + t % 4]`,
    narrative: `'memes'`,
    divergence_state: `'none'`,
    // A price that wanders by token; a few tokens are rugged on day 20.
    price_usd: `(1 + t % 17) * exp(0.3 * sin(s / (50 + t % 40)) + 0.05 * ${uniform(99)})`,
    liquidity_usd: `CASE WHEN t % 97 = 0 AND s > ${Math.floor(STEPS * (2 / 3))} THEN 500 ELSE (20000 + 1000 * (t % 500)) * (1 + 0.2 * ${uniform(98)}) END`,
  };
  const burst = `CASE WHEN ${uniform(97)} < 0.0005 THEN 1 ELSE 0 END`;
  const cooling = `CASE WHEN ${uniform(96)} < 0.0005 THEN 1 ELSE 0 END`;
  for (const f of RULE_FIELDS) if (!(f in values)) values[f] = f in FIELDS ? FIELDS[f](uniform, burst, cooling) : 'NULL';
  const select = columns.map((c) => `${values[c]} AS ${c}`).join(', ');
  return dialect === 'duckdb'
    ? `SELECT ${select} FROM range(${firstStep}, ${firstStep + steps}) AS st(s), range(${TOKENS}) AS tk(t) ORDER BY s, t`
    : `SELECT ${select} FROM (SELECT number AS t FROM system.numbers LIMIT ${TOKENS}) CROSS JOIN (SELECT number + ${firstStep} AS s FROM system.numbers LIMIT ${steps})`;
}

/** Plain noise passing on about 1.5% of snapshots: many entries, the heavy case. */
export const SPEC = normaliseBacktestSpec({
  rules: [
    { field: 'momentum', op: '>=', value: 97 },
    { field: 'crowding', op: '<=', value: 50 },
  ],
  horizon: '24h',
});

interface Figures {
  rows: number;
  countMs: number;
  backtestMs: number;
  entries: number;
  candidates: number;
  studiesMs: number;
  refreshMs: number;
  studyEvents: number;
}

async function time<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, performance.now() - started];
}

async function measure(store: AnalyticalStore<ProjectionTables>): Promise<Figures> {
  const history = storeHistory(store);
  // Warm: the first statement on a cold store pays for loading what the rest reuse.
  // The baseline reads a column of every row (a bare count(*) is answered from metadata).
  const scan = sql`SELECT count(*) AS n, sum(${column(snapshotHistory, 'price_usd')}) AS total FROM ${table(snapshotHistory)}`;
  await store.query(scan);
  const [[{ n }], countMs] = await time(() => store.query<{ n: number }>(scan));
  const [result, backtestMs] = await time(() => runBacktest(SPEC, history));
  const end = T0 + STEPS * STEP_MS - STEP_MS;
  const asOf = refreshTime(end);
  const [state, studiesMs] = await time(() => refreshEventStudies(null, history, asOf - EVENT_STUDY_REFRESH_MS));
  const [next, refreshMs] = await time(() => refreshEventStudies(state, history, asOf));
  return {
    rows: n,
    countMs,
    backtestMs,
    entries: result.n,
    candidates: result.counts.candidates,
    studiesMs,
    refreshMs,
    studyEvents: Object.values(next.studies).reduce((sum, s) => sum + s.events, 0),
  };
}

async function duckdbFigures(dir: string): Promise<Figures> {
  const path = join(dir, 'history.duckdb');
  const created = await DuckDbStore.open({ path, tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger });
  await created.migrate();
  await created.close();
  const instance = await DuckDBInstance.create(path);
  const connection = await instance.connect();
  await connection.run(`INSERT INTO snapshot_history ${generator('duckdb')}`);
  connection.closeSync();
  instance.closeSync();
  const store = await DuckDbStore.open({ path, tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger });
  try {
    return await measure(store);
  } finally {
    await store.close();
  }
}

async function clickhouseFigures(url: string): Promise<Figures> {
  const database = `bench_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const store = new ClickHouseStore({ url, database, tables: PROJECTION_TABLES, migrationsDir: migrationsDir('clickhouse'), logger });
  await store.migrate();
  // A day per statement: the test server's per-query memory limit does not hold all 8.6M rows.
  const perDay = STEPS / DAYS;
  for (let day = 0; day < DAYS; day++) {
    const response = await fetch(url, { method: 'POST', body: `INSERT INTO "${database}".snapshot_history ${generator('clickhouse', day * perDay, perDay)}` });
    if (!response.ok) throw new Error(`generating rows failed: ${await response.text()}`);
  }
  await fetch(url, { method: 'POST', body: `OPTIMIZE TABLE "${database}".snapshot_history FINAL` });
  try {
    return await measure(store);
  } finally {
    await store.close();
    await fetch(url, { method: 'POST', body: `DROP DATABASE IF EXISTS "${database}"` });
  }
}

const seconds = (ms: number): string => (ms / 1000).toFixed(2).padStart(8);

export async function benchBacktest(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-backtest-'));
  const only = process.env.BENCH_BACKTEST_STORES?.split(',') ?? ['duckdb', 'clickhouse'];
  const figures: [string, Figures][] = [];
  try {
    if (only.includes('duckdb')) figures.push(['duckdb', await duckdbFigures(dir)]);
    if (only.includes('clickhouse')) {
      const server = await startClickHouseServer();
      try {
        figures.push(['clickhouse', await clickhouseFigures(server.url)]);
      } finally {
        await server.stop();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const out = process.stdout;
  out.write(`${DAYS} days x ${TOKENS.toLocaleString('en-US')} tokens x 5-minute snapshots; backtest: 2 rules passing on 1.5% of snapshots, 24h horizon and cooldown\n`);
  out.write(`${'store'.padEnd(12)}${'rows'.padStart(11)}${'scan s'.padStart(9)}${'backtest s'.padStart(11)}  ratio  ${'candidates'.padStart(10)}${'entries'.padStart(9)}\n`);
  for (const [name, f] of figures) {
    out.write(
      `${name.padEnd(12)}${f.rows.toLocaleString('en-US').padStart(11)}${seconds(f.countMs).padStart(9)}${seconds(f.backtestMs).padStart(11)}  ${(f.backtestMs / f.countMs).toFixed(0).padStart(5)}  ${String(f.candidates).padStart(10)}${String(f.entries).padStart(9)}\n`,
    );
  }
  out.write(`\nevent studies (all six), from scratch and one hourly refresh after it\n`);
  out.write(`${'store'.padEnd(12)}${'full s'.padStart(9)}${'refresh s'.padStart(10)}  ${'events'.padStart(8)}\n`);
  for (const [name, f] of figures) {
    out.write(`${name.padEnd(12)}${seconds(f.studiesMs).padStart(9)}${seconds(f.refreshMs).padStart(10)}  ${String(f.studyEvents).padStart(8)}\n`);
  }
  for (const [name, f] of figures) {
    const scan = { name: 'one scan of the rows', value: f.countMs / 1000 };
    report({ figure: `backtest, ${DAYS} days x ${TOKENS.toLocaleString('en-US')} tokens, ${name}`, value: f.backtestMs / 1000, unit: 's', baseline: scan });
    report({ figure: `six event studies from scratch, ${name}`, value: f.studiesMs / 1000, unit: 's', baseline: scan });
  }
}
