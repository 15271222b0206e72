import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { openLogServices, type LogServices } from '../infra/bootstrap.ts';
import { loadConfig, type Config } from '../infra/config.ts';
import { Simulator } from '../infra/feeds/sim/engine.ts';
import { DEFAULT_AUTHORS, DEFAULT_TOKENS, seedHistory } from '../infra/feeds/sim/runner.ts';
import { partitionForKey } from '../infra/log/partitioner.ts';
import type { EventLog } from '../infra/log/port.ts';
import { startClickHouseServer } from '../infra/peers/clickhouse-server.ts';
import { startMockBroker } from '../infra/peers/kafka-mock-broker.ts';
import { startSchemaRegistryServer } from '../infra/peers/schema-registry-server.ts';
import { waitFor } from '../infra/wait.ts';
import { analogsStage } from '../processors/analogs/analogs.ts';
import { PROCESSORS } from '../processors/index.ts';
import { outcomesStage } from '../processors/outcomes/outcomes.ts';
import type { Processor } from '../processors/runtime/processor.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { scoresStage } from '../processors/scores/scores.ts';
import { CATALOGUE, TOPICS } from '../schemas/catalogue.ts';
import { inputInHalves, type Halves } from '../test/helpers/read-topic.ts';
import { engineProgress, engineRestores, holdsEngine, killEngineHolderWithInputLeft, lastGroupJoin, RoleProcesses, type RoleProcess } from '../test/helpers/role-processes.ts';
import { lagOf, onThreadsToEnd, runToEnd } from './processor-runs.ts';
import { eventsPerSecond as rate, notMeasured, report, timesBaseline } from './results.ts';

const run = promisify(execFile);
const SESSION_TIMEOUT_MS = 6_000;
/** Days of the default world whose outcome subjects the stage's thread counts are timed on. */
const STAGE_DAYS = Number(process.env.BENCH_SCALE_DAYS ?? 3);
/** Days of the default world the quant engine's tasks are timed on. */
const ENGINE_DAYS = Number(process.env.BENCH_SCALE_ENGINE_DAYS ?? 2);
const logger = pino({ level: 'warn' });
/** A world the mock broker holds whole (it keeps about 5 MB per partition). */
const WORLD = ['--days', '1', '--seed', '11', '--tokens', '20', '--authors', '120', '--end', '2026-06-01T00:00:00Z'];

/** Task counts the work balance is simulated for, beyond the 2 cores the rest is timed on. */
const BALANCE_TASKS = [4, 8, 16, 32];
/** The task count the reported rows are for. */
const MOST_TASKS = Math.max(...BALANCE_TASKS);
/** Days of the worlds the work balance is simulated on: the default world's week (`tqa sim history`). */
const BALANCE_DAYS = 7;
/** Multiples of the default world's tokens the work balance is simulated on. */
const BALANCE_MULTIPLES = [1, 10];

/**
 * Scale-out, in five parts, after the work balance beyond two cores by simulation (its speed-up
 * printed once the first part has timed the stages). The quant engine and the stages cut from
 * it, a thread each, all at once on the 2 cores against one after the other, and two
 * independent copies of the engine at once against one, the bound of the first; the outcomes
 * stage (a task per partition) on 2 threads against 1. Then the distributed mode on one
 * machine (the Kafka mock broker, a schema registry and ClickHouse, as `tqa peers` runs them):
 * how long a processors replica takes to take the quant engine over from one killed with -9
 * (two `tqa start --roles processors` processes on data dirs of their own, so the replica
 * restores the checkpoint the other saved in the store), from the kill to the replica's first
 * commit of input beyond what the killed one had committed, against the broker's session
 * timeout, which it waits before moving the partitions; and how fast the processors catch up
 * with a second process added, and the CPU one process uses once caught up, its stages
 * waiting for input.
 */
export async function benchScale(): Promise<void> {
  const balance = workBalance();
  await onSeededWorld(ENGINE_DAYS, quantEngine.inputs, undefined, async (world) => {
    serialSpeedUps(balance, await engineOnThreads(world));
    await engineCopiesOnThreads(world);
  });
  await onSeededWorld(STAGE_DAYS, outcomesStage.inputs, (config, services) => runToEnd(quantEngine, config, services, logger), stageOnThreads);
  await replicaTakeover();
  await processorsAdded();
}

/** A simulated world's token-keyed work spread over tasks: the largest task's share of it, per task count. */
interface WorkBalance {
  /** Multiple of the default world's tokens. */
  multiple: number;
  /** Tokens with market ticks in the simulated days, and their ticks: the work. */
  tokens: number;
  work: number;
  /** Task count → the largest task's share of the work (1/N when balanced). */
  largestShare: Map<number, number>;
}

const worldName = (multiple: number) => (multiple === 1 ? 'default world' : `${multiple}× tokens`);

/**
 * How evenly the partitioned stages' work would spread over more tasks than the 2 cores here
 * run: the default world and 10× its tokens simulated (no log, no engine, so it is cheap), each
 * token's work put on the partition of its id both logs give (murmur2), for BALANCE_TASKS
 * partitions. Work per token = its market ticks: the partitioned stages' inputs are keyed by
 * token, the ticks themselves (outcomes) and what the engine writes as a token trades (feature
 * snapshots and score inputs for scores, outcome subjects). Mentions, which also make
 * snapshots, are a token's only once the engine has resolved them, so they are left out.
 */
function workBalance(): WorkBalance[] {
  const started = performance.now();
  const balance = BALANCE_MULTIPLES.map((multiple) => {
    const ticks = [...marketTicksPerToken(DEFAULT_TOKENS * multiple)];
    const work = ticks.reduce((sum, [, n]) => sum + n, 0);
    const largestShare = new Map(
      BALANCE_TASKS.map((tasks) => {
        const perTask = new Array<number>(tasks).fill(0);
        for (const [tokenId, n] of ticks) perTask[partitionForKey(tokenId, tasks)] += n;
        return [tasks, Math.max(...perTask) / work];
      }),
    );
    return { multiple, tokens: ticks.length, work, largestShare };
  });
  const seconds = (performance.now() - started) / 1000;
  const heads = balance.map((b) => `${worldName(b.multiple)} (${b.tokens.toLocaleString('en-US')} tokens, ${b.work.toLocaleString('en-US')} ticks)`);
  process.stdout.write(
    `work balance beyond two cores, by simulation (${BALANCE_DAYS} days, seed 1, simulated in ${seconds.toFixed(1)} s): work per token = its market ticks, ` +
      `on the partition murmur2 of its id gives, as in both logs; the largest task's work against the mean (1/N of it)\n` +
      balanceTable(heads, (b, tasks) => `${(b.largestShare.get(tasks)! * tasks).toFixed(2)}×`, balance),
  );
  for (const b of balance)
    report({
      figure: `largest of ${MOST_TASKS} tasks against the mean, by simulation (${worldName(b.multiple)}, ${BALANCE_DAYS} days)`,
      value: b.largestShare.get(MOST_TASKS)! * MOST_TASKS,
      unit: '×',
      note: `work per token = its market ticks (${b.work.toLocaleString('en-US')} ticks of ${b.tokens.toLocaleString('en-US')} tokens), on the partition murmur2 of the token id gives; 1 is a perfect balance`,
    });
  return balance;
}

/** Market ticks per token id in BALANCE_DAYS of the world seedHistory makes with seed 1 and `tokens` tokens, ending where the bench's worlds end. */
function marketTicksPerToken(tokens: number): Map<string, number> {
  const endMs = Date.UTC(2026, 5, 1);
  const sim = Simulator.start({ seed: 1, tokens, authors: DEFAULT_AUTHORS, startMs: endMs - BALANCE_DAYS * 86_400_000 });
  const ticks = new Map<string, number>();
  while (sim.clockMs < endMs) for (const r of sim.step()) if (r.topic === TOPICS.market.name) ticks.set(r.key, (ticks.get(r.key) ?? 0) + 1);
  return ticks;
}

/** A row per task count, a column per world: `cell` right-aligned under each world's head. */
function balanceTable(heads: string[], cell: (b: WorkBalance, tasks: number) => string, balance: WorkBalance[]): string {
  const line = (first: string, cells: string[]) => `  ${first.padStart(5)}  ${cells.map((c, i) => c.padStart(heads[i].length)).join('  ')}\n`;
  return line('tasks', heads) + BALANCE_TASKS.map((tasks) => line(String(tasks), balance.map((b) => cell(b, tasks)))).join('');
}

/** A stage's seconds in the run of the engine's stages one after the other, and whether it has a task per partition. */
type StageTime = Pick<Processor<unknown>, 'name' | 'parallelism'> & { seconds: number };

/**
 * Amdahl's bound on the simulated balance, with a core per task: the single-task stages' share
 * s of the stage time stays serial and the partitioned stages' part lasts as long as their
 * largest task, so N tasks allow 1 / (s + (1 − s) × the largest task's share). s comes from the
 * engine's stages timed one after the other on the default world; the 10× world gets the same s.
 */
function serialSpeedUps(balance: WorkBalance[], stages: StageTime[]): void {
  const seconds = (of: StageTime[]) => of.reduce((sum, s) => sum + s.seconds, 0);
  const single = stages.filter((s) => s.parallelism === 'single');
  const serial = seconds(single) / seconds(stages);
  const speedUp = (largestShare: number) => 1 / (serial + (1 - serial) * largestShare);
  const partitioned = stages.filter((s) => s.parallelism === 'partition').map((s) => s.name);
  process.stdout.write(
    `  speed-up the serial stages allow, a core per task, 1 / (s + (1 − s) × the largest task's share): s = ${serial.toFixed(2)}, the share of ` +
      `${single.map((s) => s.name).join(' and ')} (a task each) in the stage times one after the other above, ${partitioned.join(', ')} a task per partition ` +
      `(the outcomes and public-events stages, not timed there, left out)\n` +
      balanceTable(balance.map((b) => worldName(b.multiple)), (b, tasks) => `${speedUp(b.largestShare.get(tasks)!).toFixed(2)}×`, balance),
  );
  for (const b of balance)
    report({
      figure: `speed-up the serial stages allow at ${MOST_TASKS} tasks, by simulation (${worldName(b.multiple)}, ${BALANCE_DAYS} days)`,
      value: speedUp(b.largestShare.get(MOST_TASKS)!),
      unit: '×',
      baseline: { name: `${MOST_TASKS} tasks of equal work`, value: speedUp(1 / MOST_TASKS) },
      note: `s = ${serial.toFixed(2)}, the single-task stages' share of the engine's stages one after the other (embedded, ${ENGINE_DAYS} days, default world)`,
    });
}

/**
 * What the single-task engine did, now the engine and the stages it feeds that took its work
 * over (scores, a task per partition; analogs, one task), each on a worker thread of its own
 * (TQA_STAGE_THREADS=1) as `tqa start` runs them: together on the 2 cores against one after
 * the other. Timed from the threads' start to every group committed to its inputs' ends;
 * events are the engine's input records. Returns each stage's time one after the other.
 */
async function engineOnThreads(world: SeededWorld): Promise<StageTime[]> {
  const stages = [quantEngine, scoresStage, analogsStage];
  const config = (base: Config): Config => ({ ...base, TQA_STAGE_THREADS: 1 });
  const sum = (values: number[]) => values.reduce((x, y) => x + y, 0);
  const { input } = world;
  const { one, two } = await onOneAndTwoThreads(world, async (base, threads) => {
    if (threads === 2) return { ...(await onThreadsToEnd(config(base), stages, logger)), apart: [] };
    const runs = [];
    for (const stage of stages) runs.push(await onThreadsToEnd(config(base), [stage], logger));
    return { seconds: sum(runs.map((r) => r.seconds)), processCpuSeconds: sum(runs.map((r) => r.processCpuSeconds)), apart: runs.map((r) => r.seconds) };
  });
  const cores = { apart: one.processCpuSeconds / one.seconds, atOnce: two.processCpuSeconds / two.seconds };
  const parts = stages.map((stage, i) => `${stage.name} ${one.apart[i].toFixed(1)} s`).join(', ');
  process.stdout.write(
    `quant engine, ${ENGINE_DAYS} days (${input.toLocaleString('en-US')} input records): ${rate(input / two.seconds)} as its 3 stages at once, ${rate(input / one.seconds)} one after the other ` +
      `(${(one.seconds / two.seconds).toFixed(2)}×; one after the other: ${parts})\n` +
      // A stage alone already keeps more than one core busy (V8 collects garbage on helper
      // threads), which bounds what running the stages at once can gain on the machine's cores.
      `  cores the bench process kept busy: ${cores.apart.toFixed(2)} one after the other (at most ${(availableParallelism() / cores.apart).toFixed(2)}× on ${availableParallelism()} cores), ${cores.atOnce.toFixed(2)} at once\n`,
  );
  report({
    figure: `quant engine events/s, its stages at once against one after the other (embedded, ${ENGINE_DAYS} days, 2 cores)`,
    value: input / two.seconds,
    unit: 'events/s',
    baseline: { name: 'its stages one after the other', value: input / one.seconds },
    target: timesBaseline(1.7),
    note: `the engine, the scores stage (4 tasks) and the analogs stage, a thread each; the faster of two runs each; the process kept ${cores.apart.toFixed(2)} cores busy one after the other, ${cores.atOnce.toFixed(2)} at once`,
  });
  return stages.map(({ name, parallelism }, i) => ({ name, parallelism, seconds: one.apart[i] }));
}

/**
 * What the machine gives the engine's work on its cores when the threads share nothing but the
 * process: two copies of the quant engine, each on a copy of the data dir and a worker thread
 * of its own, at once against one alone. The engine's stages at once, which also wait on one
 * another and share a log, can gain no more than this. Timed from the earlier copy's start
 * to the later one's end; events are both copies' input records.
 */
async function engineCopiesOnThreads(world: SeededWorld): Promise<void> {
  const { input } = world;
  const onThread = (config: Config) => onThreadsToEnd({ ...config, TQA_STAGE_THREADS: 1 }, [quantEngine], logger);
  const { one, two } = await onOneAndTwoThreads(world, async (config, threads) => {
    if (threads === 1) return onThread(config);
    const twin = `${config.TQA_DATA_DIR}-twin`;
    await cp(config.TQA_DATA_DIR, twin, { recursive: true });
    try {
      const runs = await Promise.all([config, { ...config, TQA_DATA_DIR: twin }].map(onThread));
      return { seconds: (Math.max(...runs.map((r) => r.endedAt)) - Math.min(...runs.map((r) => r.startedAt))) / 1000 };
    } finally {
      await rm(twin, { recursive: true, force: true });
    }
  });
  const [together, alone] = [(2 * input) / two.seconds, input / one.seconds];
  process.stdout.write(
    `two copies of the quant engine at once, a thread and a data dir each: ${rate(together)} against ${rate(alone)} for one alone (${(together / alone).toFixed(2)}×; ${two.seconds.toFixed(1)} s against ${one.seconds.toFixed(1)} s)\n`,
  );
  report({
    figure: `two copies of the quant engine at once against one (embedded, ${ENGINE_DAYS} days, 2 cores)`,
    value: together,
    unit: 'events/s',
    baseline: { name: 'one copy alone', value: alone },
    note: "what the cores give the engine's work on threads that share only the process: a bound for its stages at once; the faster of two runs each",
  });
}

/**
 * The outcomes stage on TQA_STAGE_THREADS=1 and =2 as `tqa start` runs it (worker threads,
 * each a share of the partitions on the file log), over the engine's subjects of a world.
 * Timed from the threads' start to every partition committed to its end.
 */
async function stageOnThreads(world: SeededWorld): Promise<void> {
  const { input } = world;
  const { one, two } = await onOneAndTwoThreads(world, (config, threads) => onThreadsToEnd({ ...config, TQA_STAGE_THREADS: threads }, [outcomesStage], logger));
  const [onTwo, onOne] = [input / two.seconds, input / one.seconds];
  process.stdout.write(
    `outcomes stage, ${STAGE_DAYS} days (${input.toLocaleString('en-US')} input records): ${rate(onTwo)} on 2 threads, ${rate(onOne)} on 1 (${(onTwo / onOne).toFixed(2)}×)\n`,
  );
  report({
    figure: `outcomes stage events/s, 2 threads against 1 (embedded, ${STAGE_DAYS} days)`,
    value: onTwo,
    unit: 'events/s',
    baseline: { name: 'the stage on 1 thread', value: onOne },
    note: 'a task per partition (4), each thread a share of them; the faster of two runs each',
  });
}

/** A data dir seeded with a world, and the number of records in the inputs it was seeded for. */
interface SeededWorld {
  dir: string;
  input: number;
}

/**
 * Seeds `days` of the default world into a new data dir and runs `prepare` on it, then hands
 * it to `use` (the parts timed on it, each on copies of it); the dir is removed after.
 */
async function onSeededWorld(
  days: number,
  inputs: readonly string[],
  prepare: ((config: Config, services: LogServices) => Promise<unknown>) | undefined,
  use: (world: SeededWorld) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-scale-'));
  try {
    const config = loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'always' });
    const services = await openLogServices(config, logger);
    let input = 0;
    try {
      await seedHistory({ log: services.log, codec: services.codec, dataDir: dir, seed: 1, days, endMs: Date.UTC(2026, 5, 1) });
      await prepare?.(config, services);
      for (const topic of inputs) input += (await services.log.endOffsets(topic)).reduce((sum, p) => sum + p.offset, 0);
    } finally {
      await services.close();
    }
    await use({ dir, input });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Times `run` on 1 and on 2 threads, each time on a fresh copy of the world's dir: two runs of
 * each, alternating. Returns the faster run on each.
 */
async function onOneAndTwoThreads<Run extends { seconds: number }>(world: SeededWorld, run: (config: Config, threads: 1 | 2) => Promise<Run>): Promise<{ one: Run; two: Run }> {
  const best = new Map<1 | 2, Run>();
  for (const [i, threads] of ([1, 2, 1, 2] as const).entries()) {
    const copy = `${world.dir}-run${i}`;
    try {
      await cp(world.dir, copy, { recursive: true });
      const result = await run(loadConfig({ TQA_DATA_DIR: copy, TQA_LOG_FSYNC: 'always' }), threads);
      if (result.seconds < (best.get(threads)?.seconds ?? Infinity)) best.set(threads, result);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  }
  return { one: best.get(1)!, two: best.get(2)! };
}

/**
 * The distributed mode on one machine, as `tqa peers` runs it: the Kafka mock broker, a schema
 * registry and ClickHouse, fresh for each call, and the `tqa` processes `runOn` starts, each on
 * a data dir of its own (so a checkpoint moves only through the store). The world is seeded
 * into an embedded log and copied to the broker in two halves by event time, as `runOn`
 * appends them (`history`). Everything is stopped at the end.
 */
async function onPeers<T>(
  runOn: (peers: { env: NodeJS.ProcessEnv; log: EventLog; roles: RoleProcesses; newDir: () => Promise<string>; history: Halves }) => Promise<T>,
): Promise<T> {
  const dirs: string[] = [];
  const newDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-scale-'));
    dirs.push(dir);
    return dir;
  };
  const [broker, registry, clickhouse] = await Promise.all([startMockBroker(), startSchemaRegistryServer(), startClickHouseServer()]);
  const roles = new RoleProcesses();
  let kafka: LogServices | undefined;
  try {
    const env = {
      ...process.env,
      TQA_LOG: 'kafka',
      TQA_STORE: 'clickhouse',
      KAFKA_BROKERS: broker.brokers,
      KAFKA_IDEMPOTENT: 'false',
      KAFKA_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS),
      SCHEMA_REGISTRY_URL: registry.url,
      CLICKHOUSE_URL: clickhouse.url,
      TQA_SIM: 'off',
      LOG_LEVEL: 'info',
    };
    const seeded = { ...env, TQA_LOG: 'embedded', TQA_STORE: 'duckdb', TQA_DATA_DIR: await newDir() };
    await run(process.execPath, ['bin/tqa.js', 'sim', 'history', ...WORLD], { env: seeded });
    const seededLog = await openLogServices(loadConfig(seeded), logger);
    kafka = await openLogServices(loadConfig(env), logger);
    const history = await inputInHalves(seededLog, kafka, CATALOGUE.map((t) => t.name));
    await seededLog.close();
    return await runOn({ env, log: kafka.log, roles, newDir, history });
  } finally {
    await roles.stopAll();
    await kafka?.close();
    await Promise.all([broker.stop(), registry.close(), clickhouse.stop()]);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** The quant engine's takeover by a replica after kill -9, in the distributed mode. */
async function replicaTakeover(): Promise<void> {
  await onPeers(async ({ env, log, roles, newDir, history }) => {
    // A checkpoint at every chunk of outputs, whatever a save costs: spaced by time, the first
    // could come at the end of this small world's catch-up, leaving the replica nothing to take over.
    const processorsEnv = async () => ({ ...env, TQA_DATA_DIR: await newDir(), TQA_CHECKPOINT_INTERVAL_MS: '0', TQA_CHECKPOINT_SAVE_SHARE: '1' });
    const processors = [roles.start(['start', '--roles', 'processors'], await processorsEnv()), roles.start(['start', '--roles', 'processors'], await processorsEnv())];

    const holder = await killEngineHolderWithInputLeft(roles, processors, log, history);
    const killedAt = Date.now();
    const replica = processors.find((p) => p !== holder)!;
    // Counted at once: the replica restores the engine's state only once the broker has moved the partitions, seconds after the kill.
    const restoresBefore = engineRestores(replica).length;
    const atKill = await engineProgress(log);

    let assignedAt: number | undefined;
    const resumedAt = await waitFor(
      async () => {
        assignedAt ??= holdsEngine(replica) ? Date.now() : undefined;
        return (await engineProgress(log)).committed > atKill.committed ? Date.now() : undefined;
      },
      'the replica to commit input beyond the killed process',
      120_000,
    );
    const restore = engineRestores(replica).slice(restoresBefore).at(0);
    const restoredAfter = restore ? `${Date.parse(restore.time) - killedAt}` : '?';
    const takeoverMs = resumedAt - killedAt;
    process.stdout.write(
      `replica takeover after kill -9: ${takeoverMs} ms to its first commit beyond the killed process ` +
        `(partitions assigned after ${assignedAt === undefined ? '?' : assignedAt - killedAt} ms, state restored from its changelog after ` +
        `${restoredAfter} ms, ${restore?.restoredRecords ?? 0} changelog records read in ${restore?.ms ?? '?'} ms; ${atKill.committed} of ${atKill.end} input records committed at the kill; session timeout ${SESSION_TIMEOUT_MS} ms)\n`,
    );
    report({
      figure: 'replica takeover of the quant engine after kill -9 (Kafka mock, state from its changelog)',
      value: takeoverMs,
      unit: 'ms',
      baseline: { name: 'broker session timeout', value: SESSION_TIMEOUT_MS },
      note: `to the replica's first commit beyond the killed process (a checkpoint at every chunk of outputs); state restored from its changelog after ${restoredAfter} ms`,
    });
    if (!restore?.restoredRecords) throw new Error(`the replica did not restore the engine's state from its changelog: ${replica.stderr().slice(-2000)}`);
  });
}

/** Seconds a run of `processes` processors processes took to catch up, and the lag it showed on the way. */
interface CatchUp {
  seconds: number;
  /** Of those, the seconds after the processes' members had last joined their groups (the code loaded, the groups settled). */
  afterJoins: number;
  /** Records the processors' groups were behind, summed over them, about every LAG_SAMPLE_MS from the start. */
  lags: number[];
  /** CPU seconds per second of wall time while they caught up: of the whole machine (the peers and this process too), and of each processors process. */
  machine: { busy: number; processes: number[] };
  /** With one process: its CPU seconds per second of wall time while it caught up, and for IDLE_SAMPLE_MS after. */
  cpu?: { catchingUp: number; caughtUp: number };
}

const LAG_SAMPLE_MS = 5_000;
const IDLE_SAMPLE_MS = 10_000;

/** CPU seconds every process of the machine has used since boot, summed over the cores (from /proc/stat, in clock ticks). */
async function machineBusySeconds(): Promise<number> {
  // The first line sums the cores: user, nice, system, idle, iowait, irq, softirq, steal, …; busy is all but idle and iowait.
  const [user, nice, system, , , irq, softirq, steal] = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + steal) / 100;
}

/** CPU seconds a process (every thread of it) has used, from /proc (in clock ticks, 100 a second on Linux). */
async function cpuSeconds(pid: number): Promise<number> {
  // The fields after the command name, which is in parentheses and may hold spaces: utime and stime are the 12th and 13th.
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Lag with one processors process, and with a second one added: each run starts from the
 * seeded world, its processes each held to a core of their own (taskset), as on machines of
 * one core, and ends once every processor's group has committed its inputs to their ends. The
 * peers run on either core. Two runs of each, alternating, the faster counting. Of each run it
 * also prints the seconds after the processes' members last joined their groups: what is left
 * once their code has loaded and the groups have settled, the part a second process can share.
 * It prints how many cores the whole machine kept busy meanwhile: two processes a core each
 * plus the peers and this process may want more cores than there are, and a second process
 * then cannot help.
 */
async function processorsAdded(): Promise<void> {
  const figure = 'catch-up rate, 2 processors processes against 1 (Kafka mock, ClickHouse, a core each)';
  if (availableParallelism() < 2) return notMeasured(figure, null, 'needs 2 cores, one for each process');
  const best = new Map<number, CatchUp>();
  let input = 0;
  for (const processes of [1, 2, 1, 2]) {
    const caughtUp = await onPeers(async ({ env, log, roles, newDir, history }) => {
      await history.appendFirst();
      await history.appendRest();
      input = (await Promise.all(quantEngine.inputs.map((topic) => log.endOffsets(topic)))).flat().reduce((sum, p) => sum + p.offset, 0);
      const started = performance.now();
      const startedAt = Date.now();
      const machineAtStart = await machineBusySeconds();
      const procs: RoleProcess[] = [];
      for (let cpu = 0; cpu < processes; cpu++) procs.push(roles.start(['start', '--roles', 'processors'], { ...env, TQA_DATA_DIR: await newDir() }, String(cpu)));
      const pids = procs.map((p) => p.child.pid!);
      const lags: number[] = [];
      // One read of every group's lag per poll, upstream first: 0 is every processor at its end (committedToEnd).
      await waitFor(
        async () => {
          let lag = 0;
          for (const processor of PROCESSORS) lag += await lagOf(log, processor);
          if (performance.now() - started >= (lags.length + 1) * LAG_SAMPLE_MS) lags.push(lag);
          return lag === 0;
        },
        'every processor to commit its inputs to their ends',
        600_000,
      );
      const seconds = (performance.now() - started) / 1000;
      const lastJoin = Math.max(...procs.map((p) => lastGroupJoin(p) ?? startedAt));
      const afterJoins = seconds - (lastJoin - startedAt) / 1000;
      const atEnd = await Promise.all(pids.map(cpuSeconds));
      const machine = { busy: ((await machineBusySeconds()) - machineAtStart) / seconds, processes: atEnd.map((cpu) => cpu / seconds) };
      if (processes > 1) return { seconds, afterJoins, lags, machine };
      // What the process costs once it has nothing left to do: its stages wait on the broker for input.
      await delay(IDLE_SAMPLE_MS);
      return { seconds, afterJoins, lags, machine, cpu: { catchingUp: atEnd[0] / seconds, caughtUp: ((await cpuSeconds(pids[0])) - atEnd[0]) / (IDLE_SAMPLE_MS / 1000) } };
    });
    if (caughtUp.seconds < (best.get(processes)?.seconds ?? Infinity)) best.set(processes, caughtUp);
  }
  const [one, two] = [best.get(1)!, best.get(2)!];
  const machineLine = ({ machine }: CatchUp) => `${machine.busy.toFixed(2)} (its processors process${machine.processes.length > 1 ? 'es' : ''} ${machine.processes.map((cpu) => cpu.toFixed(2)).join(' and ')})`;
  const lagLine = (run: CatchUp) => run.lags.map((lag, i) => `${((i + 1) * LAG_SAMPLE_MS) / 1000} s: ${lag.toLocaleString('en-US')}`).join(', ');
  process.stdout.write(
    `processors processes on a core each, ${input.toLocaleString('en-US')} input records (Kafka mock): caught up in ${one.seconds.toFixed(1)} s with 1, ` +
      `${two.seconds.toFixed(1)} s with 2 (${(one.seconds / two.seconds).toFixed(2)}×)\n` +
      `  after the processes' members last joined their groups: ${one.afterJoins.toFixed(1)} s with 1, ${two.afterJoins.toFixed(1)} s with 2 (${(one.afterJoins / two.afterJoins).toFixed(2)}×)\n  lag with 1: ${lagLine(one)}\n  lag with 2: ${lagLine(two)}\n` +
      `  cores of the ${availableParallelism()} busy while they caught up, every process of the machine: ${machineLine(one)} with 1, ${machineLine(two)} with 2\n`,
  );
  report({
    figure,
    value: input / two.seconds,
    unit: 'events/s',
    baseline: { name: '1 processors process', value: input / one.seconds },
    note: 'from the processes\' start to every group committed to its ends, the 1-day world the mock holds; the faster of two runs each',
  });
  report({
    figure: 'catch-up rate once the groups have settled, 2 processors processes against 1 (Kafka mock, ClickHouse, a core each)',
    value: input / two.afterJoins,
    unit: 'events/s',
    baseline: { name: '1 processors process', value: input / one.afterJoins },
    note: 'the same runs, from the last group join of their members (each process has loaded its code and joined) to every group committed to its ends',
  });
  const { catchingUp, caughtUp } = one.cpu!;
  process.stdout.write(`  CPU of the 1 process: ${catchingUp.toFixed(2)} s a second while it caught up, ${caughtUp.toFixed(2)} s a second in the ${IDLE_SAMPLE_MS / 1000} s after\n`);
  report({
    figure: 'CPU of a caught-up processors process, its stages waiting for input (Kafka mock, one core)',
    value: caughtUp,
    unit: 'CPU s/s',
    baseline: { name: 'while it caught up', value: catchingUp },
    note: `over the ${IDLE_SAMPLE_MS / 1000} s after its catch-up, in the faster run with 1 process`,
  });
}

