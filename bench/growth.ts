import { fork } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { DEFAULT_TOKENS, seedHistory } from '../infra/feeds/sim/runner.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { readTaskTables } from '../processors/runtime/state/task-store.ts';
import type { EngineRun, IdleRun, RestartRun } from './growth-run.ts';
import { report } from './results.ts';

const DAYS = numbers('BENCH_GROWTH_DAYS', '7,14,30');
/** Multiples of the default token count. */
const MULTIPLES = numbers('BENCH_GROWTH_TOKENS', '1,10');
const MiB = 1024 ** 2;
/**
 * How long each configuration then runs live at each of the simulation's speeds in turn
 * (simulated ms per wall-clock ms): real time, as `tqa start` runs by default, then 60×.
 */
const LIVE_SECONDS = 60;
const LIVE_SPEEDS = [1, 60];

interface Configuration {
  days: number;
  multiple: number;
}

interface Measured extends Configuration {
  run: EngineRun;
  /** Size of the engine's store files once killed, bytes. */
  stateBytes: number;
  /** Keys and bytes of each table of the engine's store (a module's tables share its prefix), largest first. */
  tables: { table: string; keys: number; bytes: number }[];
  restart: RestartRun;
}

/**
 * How the quant engine's cost grows with the work: for each configuration, days of history
 * (BENCH_GROWTH_DAYS) at the first multiple of the default token count, then the first
 * number of days at each other multiple (BENCH_GROWTH_TOKENS), the engine alone from offset 0
 * to the end of the seeded input in a fresh child process (bench/growth-run.ts), so that
 * each RSS is its own configuration's, then live for a minute at each of LIVE_SPEEDS as the
 * simulation goes on: the checkpoints' targets are those of a task keeping up with its input,
 * whose checkpoints cover seconds of it; a catch-up's cover hours of event time each, and
 * their figures are printed beside. Then the child is killed (SIGKILL) while live, and a second
 * child starts the engine on what it left, the simulation going on, until its first output.
 * Seeding happens here, before the child starts, and is not timed. Baselines: the first
 * configuration's rate, and an idle child of the same entry. The state windows are bounded if
 * RSS stops growing with days once past the longest of them (a week).
 */
export async function benchGrowth(): Promise<void> {
  const configurations: Configuration[] = [
    ...DAYS.map((days) => ({ days, multiple: MULTIPLES[0] })),
    ...MULTIPLES.slice(1).map((multiple) => ({ days: DAYS[0], multiple })),
  ];
  const idle = await child<IdleRun>(['idle']);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`idle child (same entry, modules loaded, nothing run): RSS ${mib(idle.rss)} MiB, heap ${mib(idle.heapUsed)} MiB, external ${mib(idle.external)} MiB`);
  out('RSS, heap and external (typed arrays, buffers) after a full collection (--expose-gc) once caught up; peak is the process maxRSS; state is the store files once killed');
  out(
    `${'configuration'.padEnd(22)}${'input events'.padStart(14)}${'engine s'.padStart(10)}${'events/s'.padStart(10)}${'vs first'.padStart(10)}` +
      `${'RSS MiB'.padStart(9)}${'vs idle'.padStart(9)}${'heap MiB'.padStart(10)}${'ext MiB'.padStart(9)}${'peak MiB'.padStart(10)}${'state MiB'.padStart(11)}${'outputs'.padStart(12)}`,
  );
  const measured: Measured[] = [];
  for (const configuration of configurations) {
    const m = { ...configuration, ...(await measure(configuration)) };
    measured.push(m);
    const { run, restart } = m;
    out(
      `${label(m).padEnd(22)}${run.inputEvents.toLocaleString('en-US').padStart(14)}${run.engineSeconds.toFixed(1).padStart(10)}` +
        `${Math.round(rate(m)).toLocaleString('en-US').padStart(10)}${(rate(m) / rate(measured[0])).toFixed(2).padStart(10)}` +
        `${mib(run.rss).padStart(9)}${(run.rss / idle.rss).toFixed(2).padStart(9)}${mib(run.heapUsed).padStart(10)}${mib(run.external).padStart(9)}` +
        `${mib(run.peakRss).padStart(10)}${mib(m.stateBytes).padStart(11)}${run.outputRecords.toLocaleString('en-US').padStart(12)}`,
    );
    out(`${' '.repeat(22)}RSS of no file (heap, native) ${mib(run.rssAnon)} MiB, of files mapped in (the store's) ${mib(run.rssFile)} MiB`);
    out(`${' '.repeat(22)}state by table: ${m.tables.map((t) => `${t.table} ${(t.bytes / MiB).toFixed(1)}`).join(', ')} MiB`);
    const catchingUp = checkpointFigures(run.checkpoints);
    const phases = [{ name: 'catching up', figures: catchingUp }, ...run.live.map((phase) => ({ name: `live at ${phase.speed}× (${phase.inputEvents.toLocaleString('en-US')} input events in ${phase.seconds} s)`, figures: checkpointFigures(phase.checkpoints) }))];
    for (const { name, figures: { count, written, ms } } of phases) {
      out(
        `${' '.repeat(22)}checkpoints ${name}: ${count}, bytes written median ${kib(written.p50)} KiB (max ${kib(written.max)}), ` +
          `ms median ${ms.p50.toFixed(0)}, p99 ${ms.p99.toFixed(0)}, max ${ms.max.toFixed(0)}; the store's data ${mib(storedBytes(m))} MiB`,
      );
    }
    for (const phase of run.live) out(`${' '.repeat(22)}live at ${phase.speed}×, mean bytes per checkpoint by table: ${largestTables(phase.checkpoints).join(', ')}`);
    out(`${' '.repeat(22)}restart after kill -9 while live: first output ${restart.firstOutputMs.toFixed(0)} ms after the runtime's start, ${restart.firstOutputFromProcessStartMs.toFixed(0)} ms after the process's`);
    // Reported as each configuration ends, so a later one failing costs only its own rows.
    report({ figure: `quant engine, ${label(m)}, fresh process`, value: rate(m), unit: 'events/s', baseline: { name: label(measured[0]), value: rate(measured[0]) } });
    report({ figure: `engine RSS after catch-up, ${label(m)}`, value: run.rss / MiB, unit: 'MiB', baseline: { name: 'idle child', value: idle.rss / MiB } });
    for (const phase of run.live) {
      const live = checkpointFigures(phase.checkpoints);
      const note = `${live.count} checkpoints, the simulation going on at ${phase.speed}× for ${phase.seconds} s (${phase.inputEvents.toLocaleString('en-US')} input events), spaced as tqa start spaces them (every 5 s, or longer by their cost)`;
      report({ figure: `engine checkpoint live at ${phase.speed}×, median bytes written, ${label(m)}`, value: live.written.p50 / MiB, unit: 'MiB', baseline: { name: "the store's data", value: storedBytes(m) / MiB }, target: { text: '≤ 1% of the data', meets: (_value, ratio) => ratio !== null && ratio <= 0.01 }, note });
      report({ figure: `engine checkpoint live at ${phase.speed}×, p99 time, ${label(m)}`, value: live.ms.p99, unit: 'ms', target: { text: '≤ 50 ms', meets: (value) => value <= 50 }, note });
    }
    report({ figure: `engine restart after kill -9, first output, ${label(m)}`, value: restart.firstOutputMs, unit: 'ms', target: { text: '≤ 2,000 ms', meets: (value) => value <= 2000 }, note: `from the runtime's start on the local store the kill left, the simulation going on; ${restart.firstOutputFromProcessStartMs.toFixed(0)} ms from the process's start (node, modules, the log opening)` });
    report({ figure: `engine checkpoint catching up, median bytes written, ${label(m)}`, value: catchingUp.written.p50 / MiB, unit: 'MiB', baseline: { name: "the store's data", value: storedBytes(m) / MiB }, note: `${catchingUp.count} checkpoints, each covering the input of 5 s or more of work (hours of event time)` });
  }

  const first = measured[0];
  // Growth: the last configuration of each sweep against the first, the ratio being the figure.
  const growth = (sweep: string, last: Measured) => {
    report({ figure: `engine RSS after catch-up, ${sweep}`, value: last.run.rss / MiB, unit: 'MiB', baseline: { name: label(first), value: first.run.rss / MiB } });
    report({ figure: `engine time per input event, ${sweep}`, value: microsPerEvent(last), unit: 'µs', baseline: { name: label(first), value: microsPerEvent(first) } });
  };
  const longest = measured[DAYS.length - 1];
  const mostTokens = measured.at(-1)!;
  if (DAYS.length > 1) growth(`${longest.days} / ${first.days} day(s) at ${first.multiple}× tokens`, longest);
  if (MULTIPLES.length > 1) growth(`${mostTokens.multiple}× / ${first.multiple}× tokens at ${first.days} day(s)`, mostTokens);
}

/**
 * Seeds a data dir of its own for the configuration, runs the engine over it in a child, kills
 * it while live, reads what its store holds, and restarts the engine on it in another child.
 */
async function measure({ days, multiple }: Configuration): Promise<Omit<Measured, keyof Configuration>> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-growth-'));
  try {
    // Seeding is not measured: no fsync. The authors stay at the default count; only the tokens scale.
    const services = await openLogServices(loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'never' }), pino({ level: 'warn' }));
    try {
      await seedHistory({ log: services.log, codec: services.codec, dataDir: dir, seed: 1, days, endMs: Date.UTC(2026, 5, 1), tokens: DEFAULT_TOKENS * multiple });
    } finally {
      await services.close();
    }
    const run = await child<EngineRun>(['run', dir, String(LIVE_SECONDS), ...LIVE_SPEEDS.map(String)], { killOnMessage: true });
    const stateBytes = await directoryBytes(join(dir, 'state'));
    const tables = await readTaskTables(join(dir, 'state', quantEngine.name, '0.lmdb'));
    const restart = await child<RestartRun>(['restart', dir, String(LIVE_SPEEDS.at(-1))]);
    return { run, stateBytes, tables, restart };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Forks bench/growth-run.ts with `args`; its one message once it has exited cleanly, or, with
 * `killOnMessage`, once it has been killed (SIGKILL) on sending it.
 */
function child<T>(args: string[], { killOnMessage = false } = {}): Promise<T> {
  const forked = fork(new URL('./growth-run.ts', import.meta.url), args, { execArgv: ['--import', 'tsx', '--expose-gc'] });
  return new Promise((resolve, reject) => {
    let result: T | undefined;
    forked.once('message', (message) => {
      result = message as T;
      if (killOnMessage) forked.kill('SIGKILL');
    });
    forked.once('error', reject);
    forked.once('exit', (code, signal) => {
      if (result !== undefined && (killOnMessage ? signal === 'SIGKILL' : code === 0)) resolve(result);
      else reject(new Error(`growth-run ${args[0]} exited (${code ?? signal}) without a result`));
    });
  });
}

async function directoryBytes(dir: string): Promise<number> {
  const names = await readdir(dir, { recursive: true });
  const entries = await Promise.all(names.map((name) => stat(join(dir, name))));
  return entries.reduce((sum, entry) => sum + (entry.isFile() ? entry.size : 0), 0);
}

function numbers(name: string, fallback: string): number[] {
  const values = (process.env[name] ?? fallback).split(',').map(Number);
  if (values.some((v) => !(v > 0))) throw new Error(`${name}: expected positive numbers separated by commas`);
  return values;
}

const label = ({ days, multiple }: Configuration) => `${days} day(s), ${multiple}× tokens`;
const rate = (m: Measured) => m.run.inputEvents / m.run.engineSeconds;
const microsPerEvent = (m: Measured) => (m.run.engineSeconds / m.run.inputEvents) * 1e6;
const mib = (bytes: number) => (bytes / MiB).toFixed(0);
const kib = (bytes: number) => Math.round(bytes / 1024).toLocaleString('en-US');
const storedBytes = (m: Pick<Measured, 'tables'>) => m.tables.reduce((sum, t) => sum + t.bytes, 0);

/** The tables that took most of the checkpoints' bytes, with their mean per checkpoint. */
function largestTables(checkpoints: EngineRun['checkpoints'], count = 6): string[] {
  const sums = new Map<string, number>();
  for (const { bytesByTable } of checkpoints) for (const [table, bytes] of Object.entries(bytesByTable)) sums.set(table, (sums.get(table) ?? 0) + bytes);
  return [...sums]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([table, bytes]) => `${table} ${kib(bytes / checkpoints.length)} KiB`);
}

/** How many checkpoints, and their median and tail: bytes written and milliseconds. */
function checkpointFigures(checkpoints: EngineRun['checkpoints']): { count: number; written: { p50: number; max: number }; ms: { p50: number; p99: number; max: number } } {
  const at = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const written = checkpoints.map((c) => c.bytesWritten).sort((a, b) => a - b);
  const ms = checkpoints.map((c) => c.ms).sort((a, b) => a - b);
  return { count: checkpoints.length, written: { p50: at(written, 0.5), max: written.at(-1) ?? 0 }, ms: { p50: at(ms, 0.5), p99: at(ms, 0.99), max: ms.at(-1) ?? 0 } };
}
