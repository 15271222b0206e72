// One configuration of `npm run bench -- growth`, in a process of its own (bench/growth.ts forks
// it with --expose-gc) so that its memory is the engine's alone. `run DATA_DIR`: the quant
// engine from offset 0 to the end of the history already seeded in DATA_DIR; `idle`: nothing,
// the floor of the same process with the same modules loaded. Either sends one message
// (EngineRun or IdleRun) and exits.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { readTaskTables } from '../processors/runtime/state/task-store.ts';
import { runToEnd } from './processor-runs.ts';

export interface IdleRun {
  /** Resident set size after a full collection, bytes. */
  rss: number;
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
  /** The engine's checkpoints on the way (its store's commits, as logged): bytes written and milliseconds each, in order. */
  checkpoints: { bytesWritten: number; ms: number }[];
}

/** Memory once everything not reachable is collected: what the process holds, not what it has yet to free. */
function settledMemory(): IdleRun {
  global.gc!();
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external };
}

async function runEngine(dir: string): Promise<EngineRun> {
  const checkpoints: EngineRun['checkpoints'] = [];
  // Warnings go to stderr as usual; the engine's checkpoint lines (debug) are kept.
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { level: number; msg: string; processor?: string; bytesWritten: number; ms: number };
        if (entry.msg === 'checkpoint committed' && entry.processor === quantEngine.name) checkpoints.push({ bytesWritten: entry.bytesWritten, ms: entry.ms });
        else if (entry.level >= 40) process.stderr.write(line);
      },
    },
  );
  // The defaults of `tqa start` (fsync always, a checkpoint every 5 s), so that the cost of
  // checkpointing a growing state shows in the time as it would in the service.
  const config = loadConfig({ TQA_DATA_DIR: dir });
  const services = await openLogServices(config, logger);
  try {
    // Memory is measured before stopping, while the runtime still holds every task's state.
    const run = await runToEnd(quantEngine, config, services, logger, settledMemory);
    return {
      ...run.atEnd!,
      inputEvents: run.processed,
      outputRecords: run.produced,
      engineSeconds: run.seconds,
      peakRss: process.resourceUsage().maxRSS * 1024,
      stateBytes: await directoryBytes(join(dir, 'state')),
      tables: await readTaskTables(join(dir, 'state', quantEngine.name, '0.lmdb')),
      checkpoints,
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

const [mode, dir] = process.argv.slice(2);
const result = mode === 'idle' ? settledMemory() : mode === 'run' && dir ? await runEngine(dir) : null;
if (result === null) throw new Error(`usage: growth-run.ts idle | run DATA_DIR (got ${process.argv.slice(2).join(' ')})`);
process.send!(result, () => process.exit(0));
