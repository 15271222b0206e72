// One configuration of `npm run bench -- growth`, in a process of its own (bench/growth.ts forks
// it with --expose-gc) so that its memory is the engine's alone.
// - `run DATA_DIR SECONDS SPEED...`: the quant engine from offset 0 to the end of the history
//   already seeded in DATA_DIR, then live for SECONDS as the simulation goes on at each SPEED in
//   turn; sends its EngineRun and goes on live at the last speed until killed (the parent kills
//   it with SIGKILL).
// - `restart DATA_DIR SPEED`: the engine started again on that data dir, the simulation going
//   on at SPEED, until its first output; sends a RestartRun and exits.
// - `idle`: nothing, the floor of the same process with the same modules loaded; sends an
//   IdleRun and exits.
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { runLive } from '../infra/feeds/sim/runner.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { processorRuntime } from './processor-runs.ts';

export interface IdleRun {
  /** Resident set size after a full collection, bytes. */
  rss: number;
  /** Of it, pages of no file (the heap, native allocations) and pages of files mapped in (the store's, say), bytes; 0 where /proc does not tell. */
  rssAnon: number;
  rssFile: number;
  /** Live JavaScript heap after the same collection, bytes. */
  heapUsed: number;
  /** Memory outside the heap held by JavaScript objects (typed arrays, buffers), bytes. */
  external: number;
}

/** A restart on the state a kill -9 left. */
export interface RestartRun {
  /** From the runtime's start to its first output handed to the log, ms. */
  firstOutputMs: number;
  /** The same from the process's start (node and the modules loading, the log opening), ms. */
  firstOutputFromProcessStartMs: number;
}

export interface EngineRun extends IdleRun {
  inputEvents: number;
  outputRecords: number;
  engineSeconds: number;
  /** Peak resident set size of the whole process (getrusage maxRSS), bytes. */
  peakRss: number;
  /** The engine's checkpoints while catching up (its store's commits, as logged): bytes written and milliseconds each, in order. */
  checkpoints: Checkpoint[];
  /** Then, live at each speed in turn: the input appended by the simulation going on for a while, and the checkpoints meanwhile. */
  live: { speed: number; seconds: number; inputEvents: number; checkpoints: Checkpoint[] }[];
}

interface Checkpoint {
  bytesWritten: number;
  /** Of them, by table. */
  bytesByTable: Record<string, number>;
  ms: number;
}

/** Memory once everything not reachable is collected: what the process holds, not what it has yet to free. */
function settledMemory(): IdleRun {
  global.gc!();
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, ...residentByKind(), heapUsed, external };
}

function residentByKind(): { rssAnon: number; rssFile: number } {
  let status = '';
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch {
    // Not Linux: the split is not known.
  }
  const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rssAnon: kB('RssAnon'), rssFile: kB('RssFile') };
}

/** Runs the engine to the end of the input, then live; sends its EngineRun and stays live until killed. */
async function runEngine(dir: string, simulation: { seconds: number; speeds: number[] }): Promise<never> {
  let checkpoints: Checkpoint[] = [];
  // Warnings go to stderr as usual; the engine's checkpoint lines (debug) are kept.
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { level: number; msg: string; processor?: string } & Checkpoint;
        if (entry.msg === 'checkpoint committed' && entry.processor === quantEngine.name) checkpoints.push({ bytesWritten: entry.bytesWritten, bytesByTable: entry.bytesByTable, ms: entry.ms });
        else if (entry.level >= 40) process.stderr.write(line);
      },
    },
  );
  // The defaults of `tqa start` (fsync always, a checkpoint every 5 s), so that the cost of
  // checkpointing a growing state shows in the time as it would in the service.
  const config = loadConfig({ TQA_DATA_DIR: dir });
  // Never closed: the process ends killed, as a kill -9 leaves the engine's files.
  const services = await openLogServices(config, logger);
  const runtime = processorRuntime(quantEngine, config, services, logger);
  const started = performance.now();
  void runtime.start();
  while (!(await runtime.caughtUp())) await new Promise((resolve) => setTimeout(resolve, 100));
  const engineSeconds = (performance.now() - started) / 1000;
  const { processed, produced } = runtime.stats;
  // Memory is measured while the runtime holds every task's state; then the simulation goes on
  // and the engine takes its records as they come, until the parent kills the process.
  const memory = settledMemory();
  const catchingUp = checkpoints;
  const live = (speed: number, signal: AbortSignal) => runLive({ log: services.log, codec: services.codec, dataDir: dir, speed, catchUp: false, signal });
  const phases: EngineRun['live'] = [];
  for (const speed of simulation.speeds) {
    checkpoints = [];
    const simulated = await live(speed, AbortSignal.timeout(simulation.seconds * 1000));
    phases.push({ speed, seconds: simulation.seconds, inputEvents: simulated.records, checkpoints });
  }
  const run: EngineRun = {
    ...memory,
    inputEvents: processed,
    outputRecords: produced,
    engineSeconds,
    peakRss: process.resourceUsage().maxRSS * 1024,
    checkpoints: catchingUp,
    live: phases,
  };
  process.send!(run);
  await live(simulation.speeds.at(-1)!, new AbortController().signal);
  throw new Error('the simulation stopped before the process was killed');
}

/** Starts the engine on the state in `dir` with the simulation going on, and times its first output. */
async function restartEngine(dir: string, speed: number): Promise<RestartRun> {
  const config = loadConfig({ TQA_DATA_DIR: dir });
  const logger = pino({ level: 'warn' });
  const services = await openLogServices(config, logger);
  const simulation = new AbortController();
  try {
    const simulated = runLive({ log: services.log, codec: services.codec, dataDir: dir, speed, catchUp: false, signal: simulation.signal });
    const started = performance.now();
    const runtime = processorRuntime(quantEngine, config, services, logger);
    void runtime.start();
    while (runtime.stats.produced === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const firstOutputAt = performance.now();
    simulation.abort();
    await simulated;
    await runtime.stop();
    return { firstOutputMs: firstOutputAt - started, firstOutputFromProcessStartMs: firstOutputAt };
  } finally {
    await services.close();
  }
}

const [mode, dir, ...numbers] = process.argv.slice(2);
const [first, ...rest] = numbers.map(Number);
if (mode === 'idle') process.send!(settledMemory(), () => process.exit(0));
else if (mode === 'run' && dir && first > 0 && rest.length > 0 && rest.every((speed) => speed > 0)) await runEngine(dir, { seconds: first, speeds: rest });
else if (mode === 'restart' && dir && first > 0) {
  const restart = await restartEngine(dir, first);
  process.send!(restart, () => process.exit(0));
} else throw new Error(`usage: growth-run.ts idle | run DATA_DIR SECONDS SPEED... | restart DATA_DIR SPEED (got ${process.argv.slice(2).join(' ')})`);
