// One configuration of `npm run bench -- growth`, in a process of its own (bench/growth.ts forks
// it with --expose-gc) so that its memory is the engine's alone. `run DATA_DIR SECONDS SPEED`:
// the quant engine from offset 0 to the end of the history already seeded in DATA_DIR, then
// live for SECONDS as the simulation goes on at SPEED; `idle`: nothing, the floor of the same process with the
// same modules loaded. Either sends one message (EngineRun or IdleRun) and exits.
import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { runLive } from '../infra/feeds/sim/runner.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { readTaskTables } from '../processors/runtime/state/task-store.ts';
import { runToEnd } from './processor-runs.ts';

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

export interface EngineRun extends IdleRun {
  inputEvents: number;
  outputRecords: number;
  engineSeconds: number;
  /** Peak resident set size of the whole process (getrusage maxRSS), bytes. */
  peakRss: number;
  /** Size of the engine's store files once stopped, bytes. */
  stateBytes: number;
  /** Keys and bytes of each table of the engine's store (a module's tables share its prefix), largest first. */
  tables: { table: string; keys: number; bytes: number }[];
  /** The engine's checkpoints while catching up (its store's commits, as logged): bytes written and milliseconds each, in order. */
  checkpoints: Checkpoint[];
  /** Then, live: the input appended by the simulation going on for a while, and the checkpoints meanwhile. */
  live: { inputEvents: number; checkpoints: Checkpoint[] };
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

async function runEngine(dir: string, simulation: { seconds: number; speed: number }): Promise<EngineRun> {
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
  const services = await openLogServices(config, logger);
  try {
    // Memory is measured before stopping, while the runtime still holds every task's state;
    // then the simulation goes on and the engine takes its records as they come.
    const caughtUp = async () => {
      const memory = settledMemory();
      const catchingUp = checkpoints;
      checkpoints = [];
      const simulated = await runLive({ log: services.log, codec: services.codec, dataDir: dir, speed: simulation.speed, catchUp: false, signal: AbortSignal.timeout(simulation.seconds * 1000) });
      return { memory, catchingUp, live: { inputEvents: simulated.records, checkpoints } };
    };
    const run = await runToEnd(quantEngine, config, services, logger, caughtUp);
    const { memory, catchingUp, live } = run.atEnd!;
    return {
      ...memory,
      inputEvents: run.processed,
      outputRecords: run.produced,
      engineSeconds: run.seconds,
      peakRss: process.resourceUsage().maxRSS * 1024,
      stateBytes: await directoryBytes(join(dir, 'state')),
      tables: await readTaskTables(join(dir, 'state', quantEngine.name, '0.lmdb')),
      checkpoints: catchingUp,
      live,
    };
  } finally {
    await services.close();
  }
}

async function directoryBytes(dir: string): Promise<number> {
  const names = await readdir(dir, { recursive: true });
  const entries = await Promise.all(names.map((name) => stat(join(dir, name))));
  return entries.reduce((sum, entry) => sum + (entry.isFile() ? entry.size : 0), 0);
}

const [mode, dir, seconds, speed] = process.argv.slice(2);
const result = mode === 'idle' ? settledMemory() : mode === 'run' && dir && Number(seconds) > 0 && Number(speed) > 0 ? await runEngine(dir, { seconds: Number(seconds), speed: Number(speed) }) : null;
if (result === null) throw new Error(`usage: growth-run.ts idle | run DATA_DIR SECONDS SPEED (got ${process.argv.slice(2).join(' ')})`);
process.send!(result, () => process.exit(0));
