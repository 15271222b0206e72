import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { EventLog, PartitionShare } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import type { Codec } from '../../schemas/codec.ts';
import { openEmbedded, silentLogger } from './runtime-fixture.ts';

/**
 * Runs of the engine and a stage behind it through the real runtime and file log, for the
 * tests that check a stage's join to the engine: a small seeded world per test, runtimes on
 * it with the batch and checkpoint spacing a test asks for.
 */

export interface StageWorld {
  dir: string;
  log: FileEventLog;
  codec: Codec;
}

export interface StageRunOptions {
  maxBatchRecords: number;
  checkpointIntervalMs?: number;
  checkpointSaveShare?: number;
  backlogRecords?: number;
  share?: PartitionShare;
}

/** The same 1.5-day world each time, seeded into a new data dir; `close` removes them all. */
export class StageWorlds {
  private readonly worlds: StageWorld[] = [];

  async world(): Promise<StageWorld> {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-stage-'));
    const { log, codec } = await openEmbedded(dir);
    await seedHistory({ log, codec, dataDir: dir, seed: 99, days: 1.5, endMs: Date.UTC(2026, 4, 1), tokens: 24, authors: 160 });
    const w = { dir, log, codec };
    this.worlds.push(w);
    return w;
  }

  async close(): Promise<void> {
    for (const w of this.worlds) {
      await w.log.close();
      await rm(w.dir, { recursive: true, force: true });
    }
  }
}

export function stageRuntime(w: StageWorld, processor: Processor<unknown>, options: StageRunOptions): ProcessorRuntime<unknown> {
  return new ProcessorRuntime<unknown>({ processor, log: w.log, codec: w.codec, checkpoints: new FileCheckpoints(join(w.dir, 'state')), logger: silentLogger, ...options });
}

/** Waits for a started runtime to catch up with its input, then stops it. */
export async function toEnd(r: ProcessorRuntime<unknown>, what: string): Promise<void> {
  await waitFor(() => r.caughtUp(), what, 180_000);
  await r.stop();
}

/** The engine over the world's whole input. */
export async function engineToEnd(w: StageWorld): Promise<void> {
  const engine = stageRuntime(w, quantEngine, { maxBatchRecords: 5000 });
  void engine.start();
  await toEnd(engine, 'the engine');
}

export async function committed(log: EventLog, group: string, topic: string): Promise<number> {
  return (await log.committedOffsets(group, topic)).reduce((sum, c) => sum + c.offset, 0);
}

/** The stage run while the engine writes (small batches, a commit every few milliseconds, so the stage keeps running into the engine's progress), both to the end. */
export async function runWhileEngineWrites(w: StageWorld, stage: Processor<unknown>): Promise<void> {
  const engine = stageRuntime(w, quantEngine, { maxBatchRecords: 300, checkpointIntervalMs: 5 });
  const runtime = stageRuntime(w, stage, { maxBatchRecords: 300 });
  void runtime.start();
  void engine.start();
  await waitFor(() => engine.caughtUp(), 'the engine', 180_000);
  await engine.stop();
  await toEnd(runtime, stage.name);
}

/**
 * The stage run with the engine until it has committed some of `topic`, stopped part way
 * (the engine first: the stage cannot go past what it committed, so it has work to hand
 * over), then both run to the end by new runtimes; returns how many records of each input
 * the first stage runtime had committed.
 */
export async function handOverMidway(w: StageWorld, stage: Processor<unknown>, topic: string): Promise<Map<string, number>> {
  const engine = stageRuntime(w, quantEngine, { maxBatchRecords: 300, checkpointIntervalMs: 5 });
  const first = stageRuntime(w, stage, { maxBatchRecords: 200, checkpointIntervalMs: 5 });
  void engine.start();
  void first.start();
  await waitFor(async () => (await committed(w.log, stage.name, topic)) > 0, 'the first stage runtime to commit', 180_000);
  await engine.stop();
  await first.stop();
  const handedOver = new Map<string, number>();
  for (const input of stage.inputs) handedOver.set(input, await committed(w.log, stage.name, input));
  const rest = stageRuntime(w, quantEngine, { maxBatchRecords: 5000 });
  const second = stageRuntime(w, stage, { maxBatchRecords: 5000 });
  void rest.start();
  void second.start();
  await toEnd(rest, 'the restarted engine');
  await toEnd(second, 'the second stage runtime');
  return handedOver;
}
