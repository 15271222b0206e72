import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog, LogConsumer } from '../../infra/log/port.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import type { CheckpointStore } from '../../processors/runtime/checkpoints/port.ts';
import type { Processor } from '../../processors/runtime/processor.ts';
import { ProcessorRuntime, type RuntimeOptions } from '../../processors/runtime/runtime.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { DeadLetter, Mention } from '../../schemas/records.ts';
import { orderSensitiveProcessor } from '../fixtures/order-sensitive-processor.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger, writeRuntimeInput } from '../helpers/runtime-fixture.ts';
import { resolvesWithin, waitFor } from '../../infra/wait.ts';

const POSTS = 3000;

/**
 * Output records per key as bytes. Outputs of one task keep their order; the fixture's
 * output keys are not co-partitioned with its tasks, so one key's records from different
 * tasks interleave by timing and are compared sorted.
 */
async function outputsByKey(dir: string, sortWithinKey = true) {
  const { log, codec } = await openEmbedded(dir);
  const records = await readTopic(log, 'quant.mentions');
  const letters = await readTopic(log, 'ops.dead-letters');
  await log.close();
  const byKey = new Map<string, string[]>();
  for (const r of records) byKey.set(r.key!, [...(byKey.get(r.key!) ?? []), `${r.timestamp}:${r.value!.toString('hex')}`]);
  const sortedByKey = Object.fromEntries([...byKey].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, sortWithinKey ? v.sort() : v]));
  return { byKey: sortedByKey, records, letters, codec };
}

/** Runs the fixture processor over the dir's input to its end, on the log `through` makes of the dir's log (a fault, say). */
async function runToEnd(
  dir: string,
  maxBatchRecords: number,
  parallelism: 'partition' | 'single' = 'partition',
  { through = (log: EventLog) => log, idleCheckMs }: { through?: (log: EventLog) => EventLog; idleCheckMs?: number } = {},
) {
  const { log, codec } = await openEmbedded(dir);
  const runtime = new ProcessorRuntime({
    processor: orderSensitiveProcessor('order-sensitive', parallelism),
    log: through(log),
    codec,
    checkpoints: new FileCheckpoints(join(dir, 'state')),
    logger: silentLogger,
    maxBatchRecords,
    checkpointIntervalMs: 0,
    idleCheckMs,
  });
  void runtime.start();
  try {
    await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
  } finally {
    await runtime.stop();
    await log.close();
  }
}

async function decodeAll(codec: Codec, topic: string, values: Buffer[]) {
  return Promise.all(values.map((v) => codec.decode(topic, v)));
}

type Commit = LogConsumer['commit'];

type ConsumerOptions = Parameters<EventLog['consumer']>[0];

/** The log whose every new consumer `adapt` changes (as a broker or a group would behave) before the runtime gets it. */
function adaptingConsumers(log: EventLog, adapt: (consumer: LogConsumer, options: ConsumerOptions) => void): EventLog {
  return new Proxy(log, {
    get(target, prop, receiver) {
      if (prop !== 'consumer') return Reflect.get(target, prop, receiver) as unknown;
      return (options: ConsumerOptions) => {
        const consumer = target.consumer(options);
        adapt(consumer, options);
        return consumer;
      };
    },
  });
}

/** The log whose consumers commit through `through(commit)`. */
function commitsThrough(log: EventLog, through: (commit: Commit) => Commit): EventLog {
  return adaptingConsumers(log, (consumer) => (consumer.commit = through(consumer.commit.bind(consumer))));
}

/** The log with a group that refuses every commit while `refusing`, as a broker refuses those of a member it expired. */
function refusingCommits(log: EventLog) {
  const group = { refusing: true, refused: 0, log };
  group.log = commitsThrough(log, (commit) => (offsets) => (group.refusing && ++group.refused ? Promise.reject(new Error('the coordinator is not aware of this member')) : commit(offsets)));
  return group;
}

/** The log with a group that holds the first commit until released, as a re-balancing group holds one; counts the commits sent. */
function heldCommits(log: EventLog) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const group = { sent: 0, release, log };
  group.log = commitsThrough(log, (commit) => async (offsets) => {
    if (++group.sent === 1) await released;
    return commit(offsets);
  });
  return group;
}

/**
 * The log with a group in which this member holds every input partition but 1 until `whole`,
 * as a task split between members held part of its inputs, and commits only what it holds, as
 * the Kafka consumer does; counts the commits that left some out.
 */
function partlyHeld(log: EventLog) {
  const group = { whole: false, partial: 0, log };
  const isHeld = (p: { partition: number }) => group.whole || p.partition !== 1;
  group.log = adaptingConsumers(log, (consumer) => {
    const assignment = consumer.assignment.bind(consumer);
    const commit = consumer.commit.bind(consumer);
    consumer.assignment = () => assignment().filter(isHeld);
    consumer.commit = (offsets) => {
      if (!offsets.every(isHeld)) group.partial++;
      return commit(offsets.filter(isHeld));
    };
  });
  return group;
}

/** The log whose reads of end offsets go through `read`, which is given the log's own. */
function endReadsThrough(log: EventLog, read: (topic: string, endOffsets: EventLog['endOffsets']) => ReturnType<EventLog['endOffsets']>): EventLog {
  return new Proxy(log, {
    get(target, prop, receiver) {
      if (prop !== 'endOffsets') return Reflect.get(target, prop, receiver) as unknown;
      return (topic: string) => read(topic, (t) => target.endOffsets(t));
    },
  });
}

/** Whether `positions` (by `topic#partition`) reach the end of every non-empty input partition. */
async function coversEveryInput(log: EventLog, processor: Processor<unknown>, positions: Record<string, number> | undefined): Promise<boolean> {
  if (!positions) return false;
  for (const topic of processor.inputs) {
    for (const end of await log.endOffsets(topic)) if (end.offset > 0 && positions[`${topic}#${end.partition}`] !== end.offset) return false;
  }
  return true;
}

async function groupCoversEveryInput(log: EventLog, processor: Processor<unknown>): Promise<boolean> {
  const committed: Record<string, number> = {};
  for (const topic of processor.inputs) for (const c of await log.committedOffsets(processor.name, topic)) committed[`${topic}#${c.partition}`] = c.offset;
  return coversEveryInput(log, processor, committed);
}

describe('processor runtime', () => {
  const dirs: string[] = [];
  const newDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-runtime-'));
    dirs.push(dir);
    await writeRuntimeInput(dir, POSTS);
    return dir;
  };
  let reference: Awaited<ReturnType<typeof outputsByKey>>;

  beforeAll(async () => {
    const dir = await newDir();
    await runToEnd(dir, 1000);
    reference = await outputsByKey(dir);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('emits the processor outputs and dead-letters bad input with its position and reason', async () => {
    const mentions = (await decodeAll(reference.codec, 'quant.mentions', reference.records.map((r) => r.value!))) as Mention[];
    // Every post but the one that breaks the processor mentions one or two tokens.
    expect(mentions.length).toBeGreaterThan(POSTS - 1);
    expect(mentions.some((m) => m.postId === 'p17')).toBe(false);
    expect(mentions.some((m) => m.engagement > 0)).toBe(true);
    const letters = (await decodeAll(reference.codec, 'ops.dead-letters', reference.letters.map((r) => r.value!))) as DeadLetter[];
    const reasons = letters.map((l) => `${l.source}@${l.offset}: ${l.reason}`).sort();
    expect(letters).toHaveLength(3);
    expect(reasons.some((r) => r.startsWith('ingest.posts') && r.includes('wire format'))).toBe(true);
    expect(reasons.some((r) => r.startsWith('ingest.market') && r.includes('priceUsd'))).toBe(true);
    expect(reasons.some((r) => r.includes('this post breaks the processor'))).toBe(true);
    for (const letter of letters) {
      expect(letter.partition).not.toBeNull();
      expect(letter.offset).not.toBeNull();
      expect(letter.payload).not.toBeNull();
    }
  });

  it('replays the same input from offset 0 into byte-identical outputs, whatever the batch size', async () => {
    const dir = await newDir();
    await runToEnd(dir, 7);
    const replay = await outputsByKey(dir);
    expect(reference.records.length).toBeGreaterThan(POSTS);
    expect(replay.byKey).toEqual(reference.byKey);
    expect(replay.letters.map((l) => l.value!.toString('hex')).sort()).toEqual(
      reference.letters.map((l) => l.value!.toString('hex')).sort(),
    );
  });

  it('runs a single task over every partition in one deterministic order', async () => {
    const [first, second] = [await newDir(), await newDir()];
    await runToEnd(first, 1000, 'single');
    await runToEnd(second, 3, 'single');
    const [a, b] = [await outputsByKey(first, false), await outputsByKey(second, false)];
    // One task sees every tick, so mentions count other ticks than the per-partition tasks do.
    expect(Object.values(a.byKey).flat().length).toBeGreaterThan(POSTS);
    expect(a.byKey).not.toEqual(reference.byKey);
    expect(b.byKey).toEqual(a.byKey); // same order within each key, not only the same set
  }, 120_000);

  it('loses no output over a kill -9 and a restart; repeated outputs carry the same id and bytes', async () => {
    const dir = await newDir();
    const run = () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/run-order-sensitive-processor.ts', dir, '25'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const progress = { processed: 0, caughtUp: false };
      child.stdout!.on('data', (chunk: Buffer) => {
        const last = chunk.toString().trim().split('\n').at(-1)!.split(' ');
        progress.processed = Number(last[1]);
        progress.caughtUp = last[3] === 'true';
      });
      const killed = new Promise((resolve) => child.once('exit', resolve));
      return { progress, kill: () => (child.kill('SIGKILL'), killed) };
    };
    const first = run();
    await waitFor(() => first.progress.processed > POSTS / 2, 'the first run to get half way', 60_000);
    await first.kill();
    const second = run();
    await waitFor(() => second.progress.caughtUp, 'the restarted run to catch up', 60_000);
    await second.kill();

    const crashed = await outputsByKey(dir);
    const expected = new Map(reference.records.map((r) => [r.value!.toString('hex'), r]));
    const seen = new Set<string>();
    for (const record of crashed.records) {
      // Every output, repeated or not, is byte-identical to one of the clean run's.
      expect(expected.has(record.value!.toString('hex'))).toBe(true);
      seen.add(record.value!.toString('hex'));
    }
    expect(seen.size).toBe(expected.size);
  }, 120_000);

  it('loses no output when an append fails while more work for the task is queued behind it', async () => {
    const dir = await newDir();
    // The fifth append fails after a while, as a produce does when the broker stops answering;
    // meanwhile the idle checks queue more work for the task that is failing.
    let appends = 0;
    const failing = (log: EventLog) =>
      new Proxy(log, {
        get(target, prop, receiver) {
          if (prop !== 'append') return Reflect.get(target, prop, receiver) as unknown;
          return async (...args: Parameters<typeof log.append>) => {
            if (++appends !== 5) return target.append(...args);
            await new Promise((resolve) => setTimeout(resolve, 300));
            throw new Error('Request Produce timed out');
          };
        },
      });
    await runToEnd(dir, 25, 'partition', { through: failing, idleCheckMs: 5 });
    expect(appends).toBeGreaterThan(5);
    const faulty = await outputsByKey(dir);
    const expected = new Set(reference.records.map((r) => r.value!.toString('hex')));
    const seen = new Set(faulty.records.map((r) => r.value!.toString('hex')));
    expect([...expected].filter((value) => !seen.has(value)), 'outputs lost').toEqual([]);
    expect([...seen].filter((value) => !expected.has(value)), 'outputs a run without the fault does not make').toEqual([]);
  });

  it('seeks again, and skips nothing, when a batch from beyond its seek arrives after it while the log still holds the records between', async () => {
    const dir = await newDir();
    // The first two batches of one partition reach the runtime without their first records,
    // as a batch fetched before a seek does when a rejoin lets it through after the seek.
    let cut = 0;
    const late = (log: EventLog) =>
      adaptingConsumers(log, (consumer) => {
        const run = consumer.run.bind(consumer);
        consumer.run = (handler) =>
          run((batch, ctx) => {
            const cutting = batch.topic === 'ingest.posts' && batch.partition === 0 && batch.records.length > 10 && cut < 2;
            if (cutting) cut++;
            return handler(cutting ? { ...batch, records: batch.records.slice(10) } : batch, ctx);
          });
      });
    await runToEnd(dir, 100, 'partition', { through: late });
    expect(cut).toBe(2);
    expect((await outputsByKey(dir)).byKey).toEqual(reference.byKey);
  });

  it('drops a task whose partitions a re-balance handed to another member, and saves nothing for it on stop', async () => {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    // The file log has no re-balances: this one takes every partition from the member.
    let handOver: (() => void) | undefined;
    const rebalancing = adaptingConsumers(log, (consumer, options) => {
      const assignment = consumer.assignment.bind(consumer);
      let held = true;
      consumer.assignment = () => (held ? assignment() : []);
      handOver = () => {
        const revoked = assignment();
        held = false;
        options.onRevoked?.(revoked);
      };
    });
    const files = new FileCheckpoints(join(dir, 'state'));
    let saves = 0;
    const checkpoints = Object.assign(Object.create(files) as FileCheckpoints, {
      save: (...args: Parameters<FileCheckpoints['save']>) => (saves++, files.save(...args)),
    });
    // No save while it runs: the task's state is unsaved when it is handed over.
    const runtime = new ProcessorRuntime({
      processor: orderSensitiveProcessor('order-sensitive', 'single'),
      log: rebalancing,
      codec,
      checkpoints,
      logger: silentLogger,
      checkpointIntervalMs: 600_000,
      checkpointSaveShare: 1e-9,
    });
    void runtime.start();
    try {
      await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
      expect(saves).toBe(0);
      handOver!();
      // stop() saves every task it still has, after the drop already queued.
      await runtime.stop();
      expect(saves).toBe(0);
      expect(await runtime.caughtUp(), 'a task is left').toBe(false);
    } finally {
      await runtime.stop();
      await log.close();
    }
  });

  /**
   * Runs the fixture's single task to the end of its input (more than 1,000 records) with
   * `tuning`, waits `settleMs` (idle checks: time for a save that is coming to land) and returns
   * the checkpoint saved by then, with the input's ends.
   */
  async function checkpointAfterCatchingUp(tuning: Partial<RuntimeOptions<unknown>>, settleMs: number) {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    const checkpoints = new FileCheckpoints(join(dir, 'state'));
    const processor = orderSensitiveProcessor('order-sensitive', 'single');
    const runtime = new ProcessorRuntime({ processor, log, codec, checkpoints, logger: silentLogger, ...tuning });
    void runtime.start();
    await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
    const ends = Object.fromEntries(
      (await Promise.all(processor.inputs.map(async (topic) => (await log.endOffsets(topic)).map((e) => [`${topic}#${e.partition}`, e.offset] as const)))).flat(),
    );
    expect(Object.values(ends).reduce((a, b) => a + b, 0)).toBeGreaterThan(1000);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const saved = await checkpoints.load(processor.name, 0);
    await runtime.stop();
    await log.close();
    return { saved, ends };
  }

  it('saves a checkpoint on reaching the end of a backlog, however far its spacing puts the next one', async () => {
    // Neither the interval nor the save-cost spacing would allow a second save during this test.
    const spacedOut = { checkpointIntervalMs: 600_000, checkpointSaveShare: 1e-9, shortBacklogRecords: 1_000_000 };
    const backlog = await checkpointAfterCatchingUp({ ...spacedOut, backlogRecords: 1000 }, 500);
    expect(backlog.saved?.positions).toEqual(backlog.ends);
    // Input below the threshold is no backlog: the spacing alone decides, and it allows no save.
    const noBacklog = await checkpointAfterCatchingUp({ ...spacedOut, backlogRecords: 1_000_000 }, 500);
    expect(noBacklog.saved).toBeUndefined();
  });

  it('saves a checkpoint a quarter of the interval after its last one on reaching the end of a short backlog', async () => {
    // A 20 s interval: the short backlog's save comes 5 s after the task's start, the interval's after 20 s.
    const tuning = { checkpointIntervalMs: 20_000, backlogRecords: 1_000_000 };
    const shortBacklog = await checkpointAfterCatchingUp({ ...tuning, shortBacklogRecords: 1000 }, 6_000);
    expect(shortBacklog.saved?.positions).toEqual(shortBacklog.ends);
    const noBacklog = await checkpointAfterCatchingUp({ ...tuning, shortBacklogRecords: 1_000_000 }, 6_000);
    expect(noBacklog.saved).toBeUndefined();
  }, 60_000);
  /**
   * Runs the fixture's single task over the dir's input with its commits going through the
   * `fake` group until the task's checkpoint covers every input, then lets `go` change the
   * group, waits for the group to commit the end of every input and, before the runtime stops
   * (its stop commits again), lets `check` look at the group.
   */
  async function commitEveryInputThrough<G extends { log: EventLog }>(fake: (log: EventLog) => G, tuning: { maxBatchRecords?: number; checkpointIntervalMs: number }, go: (group: G) => void, check: (group: G) => void): Promise<void> {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    const processor = orderSensitiveProcessor('order-sensitive', 'single');
    const group = fake(log);
    // The positions of the last save the runtime has seen finish. A save's file is on disk before
    // its save resolves (the directory's sync follows the rename), and the runtime asks for the
    // save's commit only as it resolves: the file alone would let `go` run before that commit is
    // in line, and the group would then get one more commit than the test counts.
    const files = new FileCheckpoints(join(dir, 'state'));
    let finished: Record<string, number> | undefined;
    const checkpoints: CheckpointStore = {
      load: (name, task) => files.load(name, task),
      save: async (name, task, checkpoint) => {
        await files.save(name, task, checkpoint);
        finished = { ...checkpoint.positions };
      },
    };
    const runtime = new ProcessorRuntime({ processor, log: group.log, codec, checkpoints, logger: silentLogger, ...tuning });
    void runtime.start();
    try {
      await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
      await waitFor(() => coversEveryInput(log, processor, finished), 'the checkpoint to cover every input', 10_000);
      go(group);
      await waitFor(() => groupCoversEveryInput(log, processor), 'the group to commit the end of every input', 10_000);
      check(group);
    } finally {
      await runtime.stop();
      await log.close();
    }
  }

  it('makes a failed offset commit again once the task has nothing new to save', async () => {
    // The group refuses every commit until the task has saved its last checkpoint, as a broker
    // back from an outage refuses those of a member it expired meanwhile.
    await commitEveryInputThrough(
      refusingCommits,
      { checkpointIntervalMs: 50 },
      (group) => (group.refusing = false),
      (group) => expect(group.refused).toBeGreaterThan(0),
    );
  });

  it('sends one commit for the checkpoints saved while the group held the last, with the latest positions', async () => {
    // A checkpoint (and a commit) after every batch of 50 records: dozens while the first commit is held.
    await commitEveryInputThrough(
      heldCommits,
      { maxBatchRecords: 50, checkpointIntervalMs: 0 },
      (group) => group.release(),
      (group) => expect(group.sent).toBe(2),
    );
  });

  it('commits the partitions it did not hold once it holds them, though the task has nothing new to save', async () => {
    await commitEveryInputThrough(
      partlyHeld,
      { checkpointIntervalMs: 50 },
      (group) => (group.whole = true),
      (group) => expect(group.partial).toBeGreaterThan(0),
    );
  });

  it('warns of the inputs that have records left and fetch nothing, naming them', async () => {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    // The consumer never hands partition 1's batches over, as a fetch that stopped for one partition.
    const withholding = adaptingConsumers(log, (consumer) => {
      const run = consumer.run.bind(consumer);
      consumer.run = (handler) => run((batch, ctx) => (batch.partition === 1 ? Promise.resolve() : handler(batch, ctx)));
    });
    const logged: { inputs?: { topic: string; partition: number; fetched: number; end: number; held: boolean }[] }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => logged.push(JSON.parse(line) as (typeof logged)[number]) });
    const processor = orderSensitiveProcessor('order-sensitive', 'single');
    const runtime = new ProcessorRuntime({ processor, log: withholding, codec, checkpoints: new FileCheckpoints(join(dir, 'state')), logger, watchMs: 100 });
    void runtime.start();
    try {
      const { inputs } = await waitFor(async () => logged.find((entry) => entry.inputs), 'the warning', 10_000);
      const ends = new Map<string, number>();
      for (const topic of processor.inputs) for (const e of await log.endOffsets(topic)) ends.set(`${topic}#${e.partition}`, e.offset);
      // Inputs' partition 1 only (those whose ends the merge has read): the others were handed over and processed.
      expect(inputs!.length).toBeGreaterThan(0);
      for (const input of inputs!) expect(input).toMatchObject({ partition: 1, fetched: 0, end: ends.get(`${input.topic}#1`), held: true });
    } finally {
      await runtime.stop();
      await log.close();
    }
  });

  /** Warnings of a job holding the tasks' queue, while a runtime with a 500 ms watch runs `processor` on the dir's input. */
  async function jobWarnings(processor: Processor<unknown>, checkpoints: (dir: string) => FileCheckpoints, until: (runtime: ProcessorRuntime<unknown>, warned: () => number) => Promise<unknown>) {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    const warnings: { msg: string }[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line) as { msg: string }) });
    const runtime = new ProcessorRuntime<unknown>({ processor, log, codec, checkpoints: checkpoints(dir), logger, watchMs: 500 });
    const jobs = () => warnings.filter((w) => w.msg.startsWith("a job on the tasks' queue")).length;
    void runtime.start();
    try {
      await until(runtime, jobs);
    } finally {
      await runtime.stop();
      await log.close();
    }
    return jobs();
  }

  it('warns of a job that holds the tasks\' queue for long without handling a record', async () => {
    // Loading the task's checkpoint takes until the warning came: the job handles nothing meanwhile.
    let loaded!: () => void;
    const slowLoad = new Promise<void>((resolve) => (loaded = resolve));
    class SlowCheckpoints extends FileCheckpoints {
      override async load<State>(processor: string, partition: number) {
        await slowLoad;
        return super.load<State>(processor, partition);
      }
    }
    const warned = await jobWarnings(orderSensitiveProcessor('order-sensitive', 'single'), (dir) => new SlowCheckpoints(join(dir, 'state')), async (runtime, jobs) => {
      await waitFor(() => jobs() > 0, 'the warning', 10_000);
      loaded();
      await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
    });
    expect(warned).toBeGreaterThan(0);
  });

  it('does not warn of a job that holds the tasks\' queue for long while it handles records', async () => {
    // 3 ms a record for the first 800: the batch working through them holds the queue for
    // more than 2 s (the previous watch warned of it: checked), handling records all along.
    const fixture = orderSensitiveProcessor('order-sensitive', 'single');
    let handled = 0;
    const slow: Processor<unknown> = {
      ...(fixture as Processor<unknown>),
      process(state, record, ctx) {
        if (handled++ < 800) for (const until = performance.now() + 3; performance.now() < until; );
        fixture.process(state as never, record, ctx);
      },
    };
    const warned = await jobWarnings(slow, (dir) => new FileCheckpoints(join(dir, 'state')), (runtime) =>
      waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000),
    );
    expect(handled).toBeGreaterThan(800);
    expect(warned).toBe(0);
  });

  /** What the tests below allow a stop held up by the log: well past the runtime's own bounds on its waits (10 s at most). */
  const STOP_BOUND_MS = 30_000;

  it('stops without waiting for good on an offset commit the group never answers, its checkpoint saved', async () => {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    const processor = orderSensitiveProcessor('order-sensitive', 'single');
    const checkpoints = new FileCheckpoints(join(dir, 'state'));
    // Every commit stays unanswered, as one sent to a coordinator behind a join that never completes.
    const unanswered = commitsThrough(log, () => () => new Promise<void>(() => undefined));
    const runtime = new ProcessorRuntime({ processor, log: unanswered, codec, checkpoints, logger: silentLogger, checkpointIntervalMs: 50 });
    void runtime.start();
    try {
      await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
      expect(await resolvesWithin(runtime.stop(), STOP_BOUND_MS)).toBe(true);
      expect(await coversEveryInput(log, processor, (await checkpoints.load(processor.name, 0))?.positions)).toBe(true);
      expect(await groupCoversEveryInput(log, processor)).toBe(false);
    } finally {
      await log.close();
    }
  });

  it('stops without waiting for good behind a read of an input\'s end the log never answers', async () => {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    const processor = orderSensitiveProcessor('order-sensitive', 'single');
    // Once caught up, every read of end offsets stays unanswered, as one the broker lost.
    let answering = true;
    const losingReads = endReadsThrough(log, (topic, endOffsets) => (answering ? endOffsets(topic) : new Promise(() => undefined)));
    const runtime = new ProcessorRuntime({ processor, log: losingReads, codec, checkpoints: new FileCheckpoints(join(dir, 'state')), logger: silentLogger, idleCheckMs: 20 });
    void runtime.start();
    try {
      await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
      answering = false;
      // Idle checks meanwhile find the ends they read too old and read them again.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await resolvesWithin(runtime.stop(), STOP_BOUND_MS)).toBe(true);
    } finally {
      await log.close();
    }
  });

  it('reads its inputs\' ends at the quiet interval once it has had nothing to do, and takes up new input as it comes', async () => {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    const processor = orderSensitiveProcessor('order-sensitive', 'single');
    let reads = 0;
    const counting = endReadsThrough(log, (topic, endOffsets) => (reads++, endOffsets(topic)));
    // Checks every 10 ms while active, every 1,000 ms once quiet (the default).
    const runtime = new ProcessorRuntime({ processor, log: counting, codec, checkpoints: new FileCheckpoints(join(dir, 'state')), logger: silentLogger, idleCheckMs: 10 });
    void runtime.start();
    try {
      await waitFor(() => runtime.caughtUp(), 'the runtime to process every input', 60_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // past QUIET_AFTER_MS
      const before = reads;
      const from = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // Quiet: a check a second, each reading every input's ends once, and once more where the
      // check waited on a read long enough for the first input's to age again (a loaded
      // machine). The wait may run long, so the checks it spans are counted from its length.
      // Active, every 10 ms, it would be about 200 checks.
      const checks = Math.floor((Date.now() - from) / 1_000) + 1;
      expect(reads - before).toBeLessThanOrEqual(2 * checks * processor.inputs.length);
      // New input is taken up as it comes, quiet or not.
      const [first] = await log.read(processor.inputs[0], 0, 0, 1);
      await log.append(processor.inputs[0], [{ key: first.key, value: first.value, timestamp: first.timestamp }]);
      await waitFor(() => runtime.caughtUp(), 'the runtime to process the new input', 10_000);
    } finally {
      await runtime.stop();
      await log.close();
    }
  });

  it('commits the checkpoint a task resumes from when the group never took it', async () => {
    const dir = await newDir();
    const { log, codec } = await openEmbedded(dir);
    const processor = orderSensitiveProcessor('order-sensitive', 'single');
    const checkpoints = new FileCheckpoints(join(dir, 'state'));
    // The first run's every commit is refused: its checkpoints cover all input, the group nothing.
    const group = refusingCommits(log);
    const first = new ProcessorRuntime({ processor, log: group.log, codec, checkpoints, logger: silentLogger, checkpointIntervalMs: 50 });
    void first.start();
    try {
      await waitFor(() => first.caughtUp(), 'the first run to process every input', 60_000);
    } finally {
      await first.stop();
    }
    expect(await coversEveryInput(log, processor, (await checkpoints.load(processor.name, 0))?.positions)).toBe(true);
    expect(await groupCoversEveryInput(log, processor)).toBe(false);
    // A second run with no new input: nothing to process, nothing new to save.
    const second = new ProcessorRuntime({ processor, log, codec, checkpoints, logger: silentLogger, checkpointIntervalMs: 50 });
    void second.start();
    try {
      await waitFor(() => groupCoversEveryInput(log, processor), 'the group to commit what the checkpoint covers', 10_000);
    } finally {
      await second.stop();
      await log.close();
    }
  });
});
