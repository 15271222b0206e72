import type { Codec } from '../../../schemas/codec.ts';
import { BatchProducer, type LogAppender } from '../producer.ts';
import { Simulator, STEP_MS, type SimRecord, type SimState } from './engine.ts';
import { loadSimState, saveSimState } from './state-store.ts';

/**
 * Drives the simulator into the log: `seedHistory` produces a past window as fast as the
 * log takes it, `runLive` continues from the saved state at wall-clock pace (or a multiple).
 */

export const DEFAULT_TOKENS = 500;
export const DEFAULT_AUTHORS = 3000;
const DAY_MS = 86_400_000;

export interface SimProgress {
  /** Records durable in the log so far in this run. */
  records: number;
  /** Event time the simulation has reached (epoch ms). */
  simMs: number;
  /** Share of the history done; null in live mode, which has no end. */
  fraction: number | null;
}

export interface SimRunResult {
  records: number;
  byTopic: Record<string, number>;
  /** Event-time window covered by this run: [startMs, endMs). */
  startMs: number;
  endMs: number;
}

export interface SeedHistoryOptions {
  log: LogAppender;
  codec: Codec;
  dataDir: string;
  seed: number;
  days: number;
  /** End of the history (epoch ms), rounded down to the minute; live continues from here. */
  endMs: number;
  tokens?: number;
  authors?: number;
  /** Records per append batch. */
  batchRecords?: number;
  /** Stops at the next step boundary; the state saved then lets live continue from there. */
  signal?: AbortSignal;
  onProgress?: (progress: SimProgress) => void;
}

/**
 * Produces `days` of simulated history ending at `endMs` and saves the simulator state and
 * ground truth in `<dataDir>/sim/`. Same options, same records, byte for byte.
 */
export async function seedHistory(options: SeedHistoryOptions): Promise<SimRunResult> {
  const endMs = Math.floor(options.endMs / STEP_MS) * STEP_MS;
  const startMs = endMs - Math.round(options.days * DAY_MS / STEP_MS) * STEP_MS;
  const sim = Simulator.start({
    seed: options.seed,
    tokens: options.tokens ?? DEFAULT_TOKENS,
    authors: options.authors ?? DEFAULT_AUTHORS,
    startMs,
  });
  const producer = new BatchProducer(options.log, options.codec, options.batchRecords ?? 20_000);
  const report = (): void =>
    options.onProgress?.({
      records: producer.produced,
      simMs: sim.clockMs,
      fraction: (sim.clockMs - startMs) / (endMs - startMs || 1),
    });
  let steps = 0;
  while (sim.clockMs < endMs && !options.signal?.aborted) {
    for (const r of sim.step()) await producer.send(r.topic, r.key, r.value, r.timestamp);
    if (++steps % 60 === 0) report();
  }
  await producer.flush();
  await saveSimState(options.dataDir, { sim: sim.snapshot(), skip: 0 }, sim.groundTruth());
  report();
  return { records: producer.produced, byTopic: producer.producedByTopic(), startMs, endMs: sim.clockMs };
}

/** Wall time and waiting, injectable so tests can drive live mode without sleeping. */
export interface LiveClock {
  now(): number;
  /** Resolves after `ms` or as soon as `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: LiveClock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done);
    }),
};

export interface RunLiveOptions {
  log: LogAppender;
  codec: Codec;
  dataDir: string;
  /** Simulated milliseconds per wall-clock millisecond: 1 is real time. */
  speed: number;
  signal: AbortSignal;
  onProgress?: (progress: SimProgress) => void;
  clock?: LiveClock;
  /**
   * When the saved simulation is behind the wall clock, first produce the gap as fast as
   * possible so event times meet the clock. Default: on at speed 1, off otherwise.
   */
  catchUp?: boolean;
  /** Wall-clock ms between state saves (also saved on stop). */
  saveEveryMs?: number;
  batchRecords?: number;
}

export class NoSimulationError extends Error {
  readonly code = 'NO_SIMULATION';
}

/**
 * Continues the simulation saved in the data dir, producing each record once its event
 * time is due on the simulated clock, until `signal` aborts. The state is saved every
 * `saveEveryMs` and on stop, only ever covering records already durable in the log; after
 * a crash between an append and the next save, the records of that interval are produced
 * again on resume (same keys and values).
 */
export async function runLive(options: RunLiveOptions): Promise<SimRunResult> {
  const saved = await loadSimState(options.dataDir);
  if (!saved) throw new NoSimulationError(`no simulation in ${options.dataDir}: run sim history first`);
  if (!(options.speed > 0)) throw new Error('speed must be positive');
  const clock = options.clock ?? systemClock;
  const batchRecords = options.batchRecords ?? 20_000;
  const saveEveryMs = options.saveEveryMs ?? 10_000;

  const sim = Simulator.restore(saved.sim);
  // The step being emitted: its records, how many are done, and the state before it.
  let stepState: SimState = saved.sim;
  let pending: SimRecord[] = sim.step();
  let done = saved.skip;
  const startMs = saved.sim.clockMs;

  const wallAnchor = clock.now();
  const catchUp = options.catchUp ?? options.speed === 1;
  const simAnchor = catchUp ? Math.max(startMs, wallAnchor) : startMs;
  const simNow = (): number => simAnchor + (clock.now() - wallAnchor) * options.speed;

  const producer = new BatchProducer(options.log, options.codec, Number.MAX_SAFE_INTEGER);
  let lastSave = clock.now();
  const save = async (): Promise<void> => {
    await saveSimState(options.dataDir, { sim: stepState, skip: done }, sim.groundTruth());
    lastSave = clock.now();
  };

  let reached = startMs;
  while (!options.signal.aborted) {
    const now = simNow();
    let batch = 0;
    while (batch < batchRecords) {
      if (done < pending.length) {
        const r = pending[done];
        if (r.timestamp > now) break;
        await producer.send(r.topic, r.key, r.value, r.timestamp);
        done++;
        batch++;
      } else if (sim.clockMs <= now) {
        stepState = sim.snapshot();
        pending = sim.step();
        done = 0;
      } else break;
    }
    await producer.flush();
    if (clock.now() - lastSave >= saveEveryMs) await save();
    reached = Math.max(reached, Math.min(now, sim.clockMs));
    options.onProgress?.({ records: producer.produced, simMs: reached, fraction: null });
    if (batch >= batchRecords) continue;
    const nextDue = done < pending.length ? pending[done].timestamp : sim.clockMs;
    await clock.sleep(Math.min(1000, Math.max(20, (nextDue - simNow()) / options.speed)), options.signal);
  }
  await producer.flush();
  await save();
  return { records: producer.produced, byTopic: producer.producedByTopic(), startMs, endMs: reached };
}
