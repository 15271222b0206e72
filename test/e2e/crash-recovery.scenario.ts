import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { basename, dirname, join } from 'node:path';
import { expect } from 'vitest';
import { STAGES } from '../../cli/catch-up.ts';
import { loadConfig } from '../../infra/config.ts';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import { KafkaEventLog } from '../../infra/log/kafka/kafka-log.ts';
import type { EventLog } from '../../infra/log/port.ts';
import { openStore } from '../../projections/open-store.ts';
import type { Row } from '../../infra/store/port.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { readTaskHead } from '../../processors/runtime/state/task-store.ts';
import { PROCESSORS } from '../../processors/index.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { liveGroupId } from '../../projections/runtime/runner.ts';
import { ConfluentSchemaRegistry } from '../../infra/registry/confluent.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { freePorts } from '../../infra/peers/clickhouse-server.ts';
import { startMockBroker, type MockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import { signalGroup } from '../../infra/peers/peer-process.ts';
import { startSchemaRegistryServer, type SchemaRegistryServer } from '../../infra/peers/schema-registry-server.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { engineProgress } from '../helpers/role-processes.ts';
import { dumpStore } from '../helpers/store-dump.ts';
import { waitFor } from '../../infra/wait.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
/** Topics the processors write: what a fault must neither lose nor change. */
const DERIVED = [...new Set(PROCESSORS.flatMap((p) => p.outputs))];
/**
 * Those written by a stage joined to its upstreams by their committed progress (the outcomes,
 * scores and analogs stages), or derived from such a stage's records (public events of
 * signals): complete only once the engine has committed a checkpoint covering its end.
 */
const BEHIND_UPSTREAM_COMMIT = new Set<string>();
for (const p of PROCESSORS) {
  // PROCESSORS lists upstreams first, so a processor's inputs are classified before it.
  if (p.upstreams || p.inputs.some((topic) => BEHIND_UPSTREAM_COMMIT.has(topic))) for (const topic of p.outputs) BEHIND_UPSTREAM_COMMIT.add(topic);
}
const ENGINE_GROUP = quantEngine.name;
const RUN_TIMEOUT_MS = 240_000;

// Small enough for the mock broker, which keeps about 5 MB per partition, also with the
// outputs the kills make the engine repeat (at 20 tokens quant.snapshots outgrew it, and a
// restarted processor found input it needed deleted).
const KAFKA_WORLD = { seed: 31, days: 1, endMs: Date.UTC(2026, 4, 1), tokens: 10, authors: 100 };
const KAFKA_SESSION_TIMEOUT_MS = 6_000;
/** An engine that saves a checkpoint at every chunk of outputs, whatever a save costs. */
const CHECKPOINT_EVERY_CHUNK = { TQA_CHECKPOINT_INTERVAL_MS: '0', TQA_CHECKPOINT_SAVE_SHARE: '1' };

/**
 * A world on a mock broker of its own (the mock's topics are global): topics made, schemas
 * registered and history seeded by this process. `env` adds to the environment of its service
 * processes (a store, say). KafkaWorlds stops the broker and closes the world's log.
 */
async function seededKafkaWorld(
  registryUrl: string,
  options: Pick<World, 'killCheckpointMs' | 'standby'> & { env?: Record<string, string> },
): Promise<{ world: World; broker: MockBroker }> {
  const broker = await startMockBroker();
  const dir = await mkdtemp(join(tmpdir(), 'tqa-kafka-world-'));
  const log = new KafkaEventLog({ brokers: [broker.brokers], clientId: 'fault-test', idempotent: false, logger: silentLogger, sessionTimeoutMs: KAFKA_SESSION_TIMEOUT_MS });
  await log.ensureTopics(CATALOGUE);
  const codec = new Codec(new ConfluentSchemaRegistry(registryUrl));
  await codec.registerTopics(CATALOGUE.map((t) => t.name));
  const env = {
    TQA_DATA_DIR: dir,
    TQA_LOG: 'kafka',
    KAFKA_BROKERS: broker.brokers,
    KAFKA_IDEMPOTENT: 'false',
    KAFKA_SESSION_TIMEOUT_MS: String(KAFKA_SESSION_TIMEOUT_MS),
    SCHEMA_REGISTRY_URL: registryUrl,
    ...options.env,
  };
  const world = { dir, log, codec, env, killCheckpointMs: options.killCheckpointMs, standby: options.standby };
  await seedHistory({ log, codec, dataDir: dir, ...KAFKA_WORLD });
  return { world, broker };
}

/**
 * The worlds one test file seeds, each on a mock broker of its own, all on one schema
 * registry; close() kills the roles still running and removes every world.
 */
export class KafkaWorlds {
  private readonly made: { world: World; broker: MockBroker }[] = [];

  private constructor(private readonly registry: SchemaRegistryServer) {}

  static async start(): Promise<KafkaWorlds> {
    return new KafkaWorlds(await startSchemaRegistryServer());
  }

  async seeded(options: Parameters<typeof seededKafkaWorld>[1]): Promise<{ world: World; broker: MockBroker }> {
    const seeded = await seededKafkaWorld(this.registry.url, options);
    this.made.push(seeded);
    return seeded;
  }

  all(): World[] {
    return this.made.map((m) => m.world);
  }

  async close(): Promise<void> {
    await killStartedRoles();
    for (const { world } of this.made) {
      await world.log.close();
      await rm(world.dir, { recursive: true, force: true });
    }
    await Promise.all([...this.made.map((m) => m.broker.stop()), this.registry.close()]);
  }
}

/** One copy of the seeded input, with the log connection of the test and the environment of its service processes. */
export interface World {
  dir: string;
  log: EventLog;
  codec: Codec;
  /** Environment of `tqa start` on this world (log mode, brokers, data dir, store). */
  env: Record<string, string>;
  /**
   * Checkpoint interval of the engines whose checkpoints time the kills: short enough that
   * an engine saves several times before the end of this world's input (0: at every chunk
   * of outputs, for a world small enough to be fetched whole).
   */
  killCheckpointMs: number;
  /** Whether a standby engine waits and takes over in step 2, or the engine is restarted. */
  standby: boolean;
}

interface Role {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  stderr: () => string;
}

const started = new Set<Role>();

/** Kills every service process a scenario started and is still running (after a failed test). */
export async function killStartedRoles(): Promise<void> {
  await kill(...started);
}

/** Starts `tqa start --roles <role>` in its own process group, as an operator would. */
function startRole(world: World, roles: 'processors' | 'projections' | 'api', name: string, env: Record<string, string> = {}): Role {
  const child = spawn(process.execPath, ['bin/tqa.js', 'start', '--roles', roles], {
    cwd: ROOT,
    env: { ...process.env, TQA_SIM: 'off', TQA_STORE: 'duckdb', LOG_LEVEL: 'warn', TQA_CHECKPOINT_INTERVAL_MS: '1000', ...world.env, ...env },
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  // Without the catch-up progress lines, which would fill the tail a failure shows.
  child.stderr!.on('data', (chunk: Buffer) => (err = (err + chunk.toString().replace(/^catching up .*\n?/gm, '')).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const role = { name, child, exited, stderr: () => err };
  started.add(role);
  // Nor may it outlive the test runner.
  const killOnExit = (): void => signalGroup(child, 'SIGKILL');
  process.once('exit', killOnExit);
  void exited.then(() => {
    started.delete(role);
    process.removeListener('exit', killOnExit);
  });
  return role;
}

/**
 * Waits for `check` while `roles` run. Fails at once when one of them exits, and on a timeout
 * says which groups are behind and what the roles logged.
 */
async function whileRunning(world: World, roles: Role[], check: () => Promise<boolean>, what: string): Promise<void> {
  const logged = (role: Role) => `${role.name} (exit ${role.child.exitCode ?? role.child.signalCode ?? 'none'}): ${role.stderr().slice(-3_000)}`;
  await waitFor(
    async () => {
      const gone = roles.find((r) => r.child.exitCode !== null || r.child.signalCode !== null);
      if (gone) throw new Error(`a role exited while waiting for ${what}: ${logged(gone)}`);
      return check();
    },
    what,
    RUN_TIMEOUT_MS,
  ).catch(async (err: Error) => {
    if (!err.message.startsWith('timed out')) throw err;
    throw new Error(`${err.message}; groups behind: ${(await groupsBehind(world.log)).join(', ')}\n${roles.map(logged).join('\n')}`);
  });
}

async function kill(...roles: Role[]): Promise<void> {
  for (const role of roles) signalGroup(role.child, 'SIGKILL');
  await Promise.all(roles.map((r) => r.exited));
}

/** A role stops in seconds; one still running after this is hung, and the test says which. */
const STOP_TIMEOUT_MS = 120_000;

async function stopGracefully(...roles: Role[]): Promise<void> {
  for (const role of roles) signalGroup(role.child, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STOP_TIMEOUT_MS)));
  const exited = await Promise.race([Promise.all(roles.map((r) => r.exited)).then(() => true), timedOut]);
  clearTimeout(timer);
  if (!exited) {
    const hung = roles.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
    throw new Error(`still running ${STOP_TIMEOUT_MS} ms after SIGTERM: ${hung.map((r) => `${r.name}; stderr: ${r.stderr().slice(-3_000)}`).join('\n')}`);
  }
  for (const role of roles) expect(role.child.exitCode, `${role.name} exit code; stderr: ${role.stderr()}`).toBe(0);
}

/**
 * The distinct derived records seen so far, read incrementally: a record repeated after a
 * crash (same key, time and bytes) counts once.
 */
class DerivedRecords {
  readonly distinct = new Map<string, Set<string>>(DERIVED.map((t) => [t, new Set()]));
  private readonly next = new Map<string, number>();

  constructor(private readonly log: EventLog) {}

  async refresh(): Promise<number> {
    for (const topic of DERIVED) {
      for (const { partition, offset: start } of await this.log.startOffsets(topic)) {
        const id = `${topic}#${partition}`;
        for (let from = Math.max(start, this.next.get(id) ?? 0); ; ) {
          const batch = await this.log.read(topic, partition, from, 10_000);
          if (batch.length === 0) break;
          for (const r of batch) this.distinct.get(topic)!.add(`${r.key}|${r.timestamp}|${r.value?.toString('base64')}`);
          from = batch.at(-1)!.offset + 1;
          this.next.set(id, from);
        }
      }
    }
    return this.count();
  }

  count(topics: readonly string[] = DERIVED): number {
    let n = 0;
    for (const topic of topics) n += this.distinct.get(topic)!.size;
    return n;
  }

  sorted(): Record<string, string[]> {
    return Object.fromEntries([...this.distinct].map(([topic, set]) => [topic, [...set].sort()]));
  }
}

/** True when the group's committed offsets reach the end of every partition of its topics. */
async function groupAtEnd(log: EventLog, group: string, topics: readonly string[]): Promise<boolean> {
  for (const topic of topics) {
    const [ends, committed] = await Promise.all([log.endOffsets(topic), log.committedOffsets(group, topic)]);
    for (const { partition, offset } of ends) {
      if (offset > 0 && (committed.find((c) => c.partition === partition)?.offset ?? 0) < offset) return false;
    }
  }
  return true;
}

/** The processors and projections whose groups' commits do not cover the whole log yet. */
async function groupsBehind(log: EventLog): Promise<string[]> {
  const behind: string[] = [];
  for (const { group, topics } of STAGES) if (!(await groupAtEnd(log, group, topics))) behind.push(group);
  return behind;
}

/** Every processor's state and every projection's stored rows cover the whole log, as the groups' commits say. */
async function everythingDone(log: EventLog): Promise<boolean> {
  return (await groupsBehind(log)).length === 0;
}

export interface RunOutputs {
  derived: Record<string, string[]>;
  tables: Record<string, Row[]>;
}

async function outputsOf(world: World, derived: DerivedRecords): Promise<RunOutputs> {
  await derived.refresh();
  const store = await openStore(loadConfig(world.env), silentLogger);
  try {
    return { derived: derived.sorted(), tables: await dumpStore(store) };
  } finally {
    await store.close();
  }
}

/** The engine and the projections run to the end of the log without a fault. */
export async function runWithoutFaults(world: World): Promise<RunOutputs> {
  const engine = startRole(world, 'processors', 'engine');
  const projections = startRole(world, 'projections', 'projections');
  await whileRunning(world, [engine, projections], () => everythingDone(world.log), 'the fault-free run to finish');
  await stopGracefully(engine, projections);
  return outputsOf(world, new DerivedRecords(world.log));
}

export interface FaultReport {
  outputs: RunOutputs;
  /** What each kill hit, for the test's assertions. */
  kills: { at: string; derived: number; engineCommitBehindInput?: boolean }[];
  /** How many tries the kill during a checkpoint write took to land inside the store's transaction. */
  checkpointWriteAttempts: number;
}

/**
 * Kills the engine and the projections with SIGKILL at several moments of a catch-up and
 * restarts them, then lets the last ones finish. The moments are found from the engine's own
 * checkpoint saves (inotify on its state dir, so a kill lands at once, whatever the log mode):
 *  1. early: right after the first engine's first checkpoint;
 *  2. later: two engines start together (where the world says so; else one); the one that
 *     takes the group is killed after its second checkpoint save, and the other, waiting as a
 *     standby, takes over without a restart (else the engine is restarted);
 *  3. while the engine that took over writes a checkpoint (at the first write to its store file);
 *  4. once every record the engine derives and those derived from them without waiting for
 *     its commits exist, i.e. right after the engine read its input to the end, before it
 *     saved a checkpoint covering it (the outcomes stage, behind that commit, is not done).
 */
export async function runWithFaults(world: World, reference: RunOutputs): Promise<FaultReport> {
  const derived = new DerivedRecords(world.log);
  const kills: FaultReport['kills'] = [];
  const storeFile = await engineStoreFile(world);
  const killed = async (at: string, roles: Role[], extra: Partial<FaultReport['kills'][number]> = {}) => {
    await kill(...roles);
    kills.push({ at, derived: await derived.refresh(), ...extra });
  };
  // Checkpoints at this interval whatever a save costs: spaced by their cost, a small world's
  // catch-up could end before the second one, leaving the standby no input to take over.
  const fast = { TQA_CHECKPOINT_INTERVAL_MS: String(world.killCheckpointMs), TQA_CHECKPOINT_SAVE_SHARE: '1' };

  // 1. early
  let engine = startRole(world, 'processors', 'engine-1', fast);
  let projections = startRole(world, 'projections', 'projections-1');
  await checkpointSaves(storeFile, [engine], 1);
  await killed('early', [engine, projections]);

  // 2. later, with a standby that takes over (or a restart). Started together, so the group
  // still has most of the input to work through when the standby has joined it.
  const pair = [startRole(world, 'processors', 'engine-2', fast)];
  if (world.standby) pair.push(startRole(world, 'processors', 'engine-standby', fast));
  projections = startRole(world, 'projections', 'projections-2');
  engine = await checkpointSaves(storeFile, pair, 2);
  const standby = pair.find((role) => role !== engine);
  // 3. is armed for the standby before the kill: once it has taken over, it may work through
  // the rest of a small world while the test still counts what the kill left.
  let standbyWriteKill = standby && killOnCheckpointWrite(storeFile, standby);
  await killed(standby ? 'later, a standby taking over' : 'later', [engine, projections]);
  projections = startRole(world, 'projections', 'projections-3');

  // 3. during a checkpoint write of the engine that took over (or of a restarted one, until a kill lands mid-write)
  let active = standby ?? startRole(world, 'processors', 'engine-3', fast);
  let attempts = 0;
  for (;;) {
    attempts++;
    const { landedInTransaction } = await (standbyWriteKill ?? killOnCheckpointWrite(storeFile, active));
    standbyWriteKill = undefined;
    kills.push({ at: `checkpoint write (attempt ${attempts})`, derived: await derived.refresh() });
    if (landedInTransaction) break;
    if (attempts >= 5) throw new Error('no kill landed while a checkpoint was being written in 5 attempts');
    active = startRole(world, 'processors', `engine-3-${attempts}`, fast);
  }
  await kill(projections);

  // 4. right after the input ends: every derived record exists but those behind the engine's
  // commit, and no checkpoint covers the end yet (each world's input is smaller than what the
  // runtime counts as a long backlog, whose end it saves at once; the end of a short one it
  // saves after a quarter of the interval, here longer than the wait below may take)
  engine = startRole(world, 'processors', 'engine-4', { TQA_CHECKPOINT_INTERVAL_MS: '3600000' });
  projections = startRole(world, 'projections', 'projections-4');
  const notBehindCommit = DERIVED.filter((t) => !BEHIND_UPSTREAM_COMMIT.has(t));
  const expectedNotBehind = notBehindCommit.reduce((n, t) => n + reference.derived[t].length, 0);
  await waitFor(async () => (await derived.refresh(), derived.count(notBehindCommit) >= expectedNotBehind), 'every derived record', RUN_TIMEOUT_MS).catch((err: Error) => {
    const short = DERIVED.map((t) => `${t} ${derived.distinct.get(t)!.size}/${reference.derived[t].length}`).join(', ');
    throw new Error(`${err.message} (distinct records by topic: ${short})`);
  });
  const behind = !(await groupAtEnd(world.log, ENGINE_GROUP, quantEngine.inputs));
  await killed('after the input ends', [engine, projections], { engineCommitBehindInput: behind });

  // restart and finish
  engine = startRole(world, 'processors', 'engine-5');
  projections = startRole(world, 'projections', 'projections-5');
  await whileRunning(world, [engine, projections], () => everythingDone(world.log), 'the restarted engine and projections to finish');
  await stopGracefully(engine, projections);
  return { outputs: await outputsOf(world, derived), kills, checkpointWriteAttempts: attempts };
}

/** The engine's store file in the world (its one task, 0), its directory made if missing (the scenarios watch it). */
async function engineStoreFile(world: World): Promise<string> {
  const dir = join(world.dir, 'state', encodeURIComponent(ENGINE_GROUP));
  await mkdir(dir, { recursive: true });
  return join(dir, '0.lmdb');
}

/**
 * Calls `look` at every write to the store file (inotify on its directory), one look at a
 * time, with one more after a look that writes came during; `look` returns a value to stop.
 */
function onStoreWrites<T>(file: string, what: string, roles: Role[], look: () => Promise<T | undefined>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let looking = false;
    let again = false;
    let finished = false;
    const done = (result: T | Error): void => {
      if (finished) return;
      finished = true;
      watcher.close();
      clearTimeout(timer);
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const lookNow = async (): Promise<void> => {
      if (looking) return void (again = true);
      looking = true;
      try {
        do {
          again = false;
          const found = existsSync(file) ? await look() : undefined;
          if (found !== undefined) return done(found);
        } while (again && !finished);
      } catch (err) {
        done(err as Error);
      } finally {
        looking = false;
      }
    };
    const watcher = watch(dirname(file), (_event, name) => {
      if (name === basename(file)) void lookNow();
    });
    const timer = setTimeout(() => done(new Error(`no ${what} in ${RUN_TIMEOUT_MS} ms`)), RUN_TIMEOUT_MS);
    for (const role of roles) void role.exited.then(() => done(new Error(`${role.name} exited before ${what}: ${role.stderr()}`)));
    void lookNow();
  });
}

/**
 * Resolves with the engine of `engines` that holds the task (the quant engine has one task,
 * 0) once it has committed `count` checkpoints to its store: commits seen as new positions
 * under the holder's pid (two commits between looks count as one, so at least `count`).
 */
function checkpointSaves(file: string, engines: Role[], count: number): Promise<Role> {
  const saves = new Map<Role, number>();
  let last: string | undefined;
  return onStoreWrites(file, `${count} checkpoints of ${engines.map((e) => e.name).join(' or ')}`, engines, async () => {
    const { holder, position } = await readTaskHead(file);
    const writer = engines.find((e) => e.child.pid === holder?.pid);
    const at = JSON.stringify(position);
    if (!writer || !position || at === last) return undefined;
    last = at;
    saves.set(writer, (saves.get(writer) ?? 0) + 1);
    return saves.get(writer)! >= count ? writer : undefined;
  });
}

/**
 * Kills `engine` at the first write to the store file once it holds the task and has committed
 * a checkpoint since taking it (taking the task and restoring it write too; after them, only
 * checkpoints do), while that checkpoint's transaction is being written if the kill is quick
 * enough. Returns whether it was: the file then still holds the commit before it.
 */
async function killOnCheckpointWrite(file: string, engine: Role): Promise<{ landedInTransaction: boolean }> {
  let taken: string | undefined;
  let armed: string | undefined;
  const before = await onStoreWrites(file, `a checkpoint of ${engine.name}`, [engine], async () => {
    if (armed !== undefined) {
      signalGroup(engine.child, 'SIGKILL');
      return armed;
    }
    const { holder, position } = await readTaskHead(file);
    if (holder?.pid !== engine.child.pid) return undefined;
    const at = JSON.stringify(position);
    taken ??= at;
    if (at !== taken) armed = at;
    return undefined;
  });
  await engine.exited;
  return { landedInTransaction: JSON.stringify((await readTaskHead(file)).position) === before };
}

export interface OutageReport {
  outputs: RunOutputs;
  /** Whether every projection had stored the whole log when the store went down (it must not have). */
  projectionsDoneAtKill: boolean;
  /** /v1/health while the store was down. */
  healthDuring: HealthAnswer;
  /** Whether the engine, which needs no store, reached the end of its input during the outage. */
  engineDoneDuring: boolean;
  /** The roles still running when the store came back: none may give up. */
  runningAfter: string[];
  /** /v1/health once everything was stored again. */
  healthAfter: HealthAnswer;
}

interface HealthAnswer {
  status: number;
  body: { status: string; providers: { name: string; status: string; error: string | null }[] };
}

/**
 * Runs the engine, the projections and the API as processes on a world whose store is a
 * ClickHouse server, kills the server (SIGKILL) once the projections have stored part of the
 * log, keeps it down for `outageMs` and until the engine has worked through its input, and
 * starts it again on the same data; then lets every role finish and reports what the API said
 * and what was stored.
 */
export async function runThroughStoreOutage(world: World, server: { kill(): Promise<void>; restart(): Promise<void> }, outageMs: number): Promise<OutageReport> {
  const [port] = await freePorts(1);
  const health = async (): Promise<HealthAnswer> => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/health`, { signal: AbortSignal.timeout(5_000) });
    return { status: response.status, body: (await response.json()) as HealthAnswer['body'] };
  };
  const engine = startRole(world, 'processors', 'engine');
  const projections = startRole(world, 'projections', 'projections');
  const api = startRole(world, 'api', 'api', { PORT: String(port) });
  const roles = [engine, projections, api];

  await whileRunning(world, roles, () => someProjectionStored(world.log), 'the projections to store part of the log');
  await server.kill();
  const outageEnds = Date.now() + outageMs;
  const projectionsDoneAtKill = await everythingDone(world.log);

  // A refused connection (the API still starting) is an answer not yet given, not a failure.
  const healthDuring = await waitFor<HealthAnswer>(() => health().then((h) => (h.status === 503 ? h : false), () => false), 'the API to report the store down', outageMs);
  // The store stays down for the outage and until the engine has finished, which needs no
  // store: bounded by the outage alone, a loaded machine's engine could still be running at its end.
  const engineDoneDuring = await waitFor(() => groupAtEnd(world.log, ENGINE_GROUP, quantEngine.inputs), 'the engine to finish', RUN_TIMEOUT_MS).catch(() => false);
  await delay(Math.max(0, outageEnds - Date.now()));
  const runningAfter = roles.filter((r) => r.child.exitCode === null && r.child.signalCode === null).map((r) => r.name);

  await server.restart();
  await whileRunning(world, roles, () => everythingDone(world.log), 'the projections to store the rest once the store is back');
  const healthAfter = await waitFor<HealthAnswer>(() => health().then((h) => (h.status === 200 && h.body.status === 'ok' ? h : false), () => false), 'the API to report the store up', 30_000);
  await stopGracefully(...roles);
  return { outputs: await outputsOf(world, new DerivedRecords(world.log)), projectionsDoneAtKill, healthDuring, engineDoneDuring, runningAfter, healthAfter };
}

export interface BrokerPauseReport {
  outputs: RunOutputs;
  /** Whether the engine had worked through its whole input just before the broker froze (it must not have). */
  engineDoneAtPause: boolean;
  /** The roles still running when the broker came back: none may give up. */
  runningAfter: string[];
}

/**
 * Runs the engine and the projections as processes, freezes the broker (SIGSTOP) once the
 * engine has committed its first checkpoint (it saves one at every chunk of outputs), for
 * `pauseMs`, longer than the session timeout and kafkajs's request timeout, so that requests
 * time out, connections are dropped and the groups' members are expired; then gives it back
 * (SIGCONT) and lets both finish. Nobody restarts a role in between.
 */
export async function runThroughBrokerPause(world: World, broker: MockBroker, pauseMs: number): Promise<BrokerPauseReport> {
  const engine = startRole(world, 'processors', 'engine', CHECKPOINT_EVERY_CHUNK);
  const projections = startRole(world, 'projections', 'projections');
  const roles = [engine, projections];
  await whileRunning(world, roles, async () => (await engineProgress(world.log)).committed > 0, 'the engine to commit a checkpoint');
  const engineDoneAtPause = await groupAtEnd(world.log, ENGINE_GROUP, quantEngine.inputs);
  broker.pause();
  try {
    await delay(pauseMs);
  } finally {
    broker.resume();
  }
  const runningAfter = roles.filter((r) => r.child.exitCode === null && r.child.signalCode === null).map((r) => r.name);
  await whileRunning(world, roles, () => everythingDone(world.log), 'the engine and the projections to finish once the broker is back');
  await stopGracefully(...roles);
  return { outputs: await outputsOf(world, new DerivedRecords(world.log)), engineDoneAtPause, runningAfter };
}

export interface ProcessorFreezeReport {
  outputs: RunOutputs;
  /** Whether the engine had worked through its whole input when it froze (it must not have). */
  engineDoneAtFreeze: boolean;
}

/**
 * Runs two processors processes and the projections; freezes (SIGSTOP) the process that holds
 * the engine a moment after its second checkpoint, while it works on the next chunk, for
 * `freezeMs` (longer than the session timeout, so that the group expires it) and until the
 * other has taken the engine over and saved a checkpoint; then lets it go on (SIGCONT), unaware
 * that it lost its partitions, as a process back from a long GC pause or a stalled VM is. Both
 * run to the end (the wait fails if a role exits) and are stopped (each must exit 0).
 */
export async function runThroughProcessorFreeze(world: World, freezeMs: number): Promise<ProcessorFreezeReport> {
  const storeFile = await engineStoreFile(world);
  const pair = [startRole(world, 'processors', 'processors-a', CHECKPOINT_EVERY_CHUNK), startRole(world, 'processors', 'processors-b', CHECKPOINT_EVERY_CHUNK)];
  const projections = startRole(world, 'projections', 'projections');
  const roles = [...pair, projections];

  const frozen = await checkpointSaves(storeFile, pair, 2);
  const other = pair.find((role) => role !== frozen)!;
  await delay(50); // into the next chunk's work, not at a checkpoint's edge
  signalGroup(frozen.child, 'SIGSTOP');
  const engineDoneAtFreeze = await groupAtEnd(world.log, ENGINE_GROUP, quantEngine.inputs);
  try {
    // At least freezeMs, and until the other has taken the engine over: how long that takes
    // (the session timeout, a re-balance, the checkpoint's load) depends on the machine's load.
    await Promise.all([delay(freezeMs), checkpointSaves(storeFile, [other], 1)]);
    signalGroup(frozen.child, 'SIGCONT');
    await whileRunning(world, roles, () => everythingDone(world.log), 'both processors processes and the projections to finish after the freeze');
    await stopGracefully(...roles);
    return { outputs: await outputsOf(world, new DerivedRecords(world.log)), engineDoneAtFreeze };
  } finally {
    signalGroup(frozen.child, 'SIGCONT');
  }
}

/** True when a projection has committed an offset: the records before it are stored. */
async function someProjectionStored(log: EventLog): Promise<boolean> {
  for (const projection of PROJECTIONS) {
    for (const topic of projection.topics) {
      if ((await log.committedOffsets(liveGroupId(projection), topic)).some((c) => c.offset > 0)) return true;
    }
  }
  return false;
}

/** The faulty run left exactly the fault-free run's records and rows. */
export function expectSameOutputs(faulty: RunOutputs, reference: RunOutputs): void {
  for (const topic of DERIVED) {
    expect(faulty.derived[topic].length, `${topic}: distinct records`).toBe(reference.derived[topic].length);
    expect(faulty.derived[topic], topic).toEqual(reference.derived[topic]);
  }
  for (const table of Object.keys(reference.tables)) {
    expect(faulty.tables[table].length, `${table}: rows`).toBe(reference.tables[table].length);
    expect(faulty.tables[table], table).toEqual(reference.tables[table]);
  }
}

export function derivedCount(outputs: RunOutputs): number {
  return Object.values(outputs.derived).reduce((n, records) => n + records.length, 0);
}

/** The kills landed where they were meant to: each before every output existed, the last after, with input left to redo. */
export function expectKillsLanded({ kills }: FaultReport, expectedDerived: number): void {
  const [early, later, ...rest] = kills;
  expect(early.derived).toBeLessThan(later.derived);
  expect(later.derived).toBeLessThan(expectedDerived);
  expect(rest.at(-2)!.derived, 'outputs were still missing when the engine was killed in a checkpoint write').toBeLessThan(expectedDerived);
  expect(rest.at(-1)!.engineCommitBehindInput, 'the last kill left input the saved state did not cover').toBe(true);
}
