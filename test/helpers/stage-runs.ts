import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { EventLog, PartitionShare } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import type { Codec } from '../../schemas/codec.ts';
import { readTopic } from './read-topic.ts';
import { openEmbedded, silentLogger } from './runtime-fixture.ts';

/**
 * Runs of a stage and the processors upstream of it (the engine, and for the analogs stage the
 * scores stage too) through the real runtime and file log, for the tests that check a stage's
 * join to its upstreams: a small seeded world per test, runtimes on it with the batch and
 * checkpoint spacing a test asks for.
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
  return new ProcessorRuntime<unknown>({ processor, log: w.log, codec: w.codec, checkpoints: localCheckpoints(join(w.dir, 'state'), processor), logger: silentLogger, ...options });
}

/** Waits for a started runtime to catch up with its input, then stops it. */
export async function toEnd(r: ProcessorRuntime<unknown>, what: string): Promise<void> {
  await waitFor(() => r.caughtUp(), what, 180_000);
  await r.stop();
}

/** Every processor the stage waits for, directly or through another, upstream first. */
export function upstreamsOf(stage: Processor<unknown>): Processor<unknown>[] {
  const chain: Processor<unknown>[] = [];
  for (const upstream of stage.upstreams ?? []) {
    for (const p of [...upstreamsOf(upstream), upstream]) if (!chain.includes(p)) chain.push(p);
  }
  return chain;
}

/** The stage's upstreams over the world's whole input, one after the other. */
export async function upstreamsToEnd(w: StageWorld, stage: Processor<unknown>): Promise<void> {
  for (const upstream of upstreamsOf(stage)) {
    const runtime = stageRuntime(w, upstream, { maxBatchRecords: 5000 });
    void runtime.start();
    await toEnd(runtime, upstream.name);
  }
}

/** Waits for the started runtimes of `processors` to catch up and stops them, in order: each one's commit on stop is the progress those behind it wait for. */
async function inOrderToEnd(processors: Processor<unknown>[], runtimes: ProcessorRuntime<unknown>[]): Promise<void> {
  for (const [i, r] of runtimes.entries()) await toEnd(r, processors[i].name);
}

/** Every record of a topic in the world's log, decoded, partition by partition in offset order. */
export async function decodedTopic<T>(w: StageWorld, topic: string): Promise<T[]> {
  return Promise.all((await readTopic(w.log, topic)).map(async (r) => (await w.codec.decode(topic, r.value!)) as T));
}

export async function committed(log: EventLog, group: string, topic: string): Promise<number> {
  return (await log.committedOffsets(group, topic)).reduce((sum, c) => sum + c.offset, 0);
}

/**
 * The stage run while its upstreams write (small batches, a commit every few milliseconds, so
 * the stage keeps running into their progress), all to the end.
 */
export async function runWhileUpstreamsWrite(w: StageWorld, stage: Processor<unknown>): Promise<void> {
  const upstreams = upstreamsOf(stage);
  const runtimes = [...upstreams.map((p) => stageRuntime(w, p, { maxBatchRecords: 300, checkpointIntervalMs: 5 })), stageRuntime(w, stage, { maxBatchRecords: 300 })];
  for (const r of runtimes.slice().reverse()) void r.start();
  await inOrderToEnd([...upstreams, stage], runtimes);
}

/**
 * The stage run with its upstreams until it has committed some of `topic`, stopped part way
 * (the upstreams first: the stage cannot go past what they committed, so it has work to hand
 * over), then all run to the end by new runtimes; returns how many records of each input the
 * first stage runtime had committed.
 */
export async function handOverMidway(w: StageWorld, stage: Processor<unknown>, topic: string): Promise<Map<string, number>> {
  const upstreams = upstreamsOf(stage);
  const first = [...upstreams.map((p) => stageRuntime(w, p, { maxBatchRecords: 300, checkpointIntervalMs: 5 })), stageRuntime(w, stage, { maxBatchRecords: 200, checkpointIntervalMs: 5 })];
  for (const r of first) void r.start();
  await waitFor(async () => (await committed(w.log, stage.name, topic)) > 0, 'the first stage runtime to commit', 180_000);
  for (const r of first) await r.stop();
  const handedOver = new Map<string, number>();
  for (const input of stage.inputs) handedOver.set(input, await committed(w.log, stage.name, input));
  const second = [...upstreams, stage].map((p) => stageRuntime(w, p, { maxBatchRecords: 5000 }));
  for (const r of second) void r.start();
  await inOrderToEnd([...upstreams, stage], second);
  return handedOver;
}
