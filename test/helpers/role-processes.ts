import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { signalGroup } from '../../infra/peers/peer-process.ts';
import type { EventLog } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import type { Halves } from './read-topic.ts';

/** `tqa` commands run as processes of their own, as a user runs the roles; for the tests and the benchmarks. */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RoleProcess {
  child: ChildProcess;
  /** Everything the process wrote on stderr so far (its JSON log lines). */
  stderr(): string;
  exited: Promise<number | null>;
}

/** The `tqa` processes one test or benchmark started, so that whatever is left can be stopped at its end. */
export class RoleProcesses {
  private readonly running = new Set<RoleProcess>();

  /** `cpus`: the cores the process may run on (taskset's list, e.g. "0"), as on a machine of that many; default any. */
  start(args: string[], env: NodeJS.ProcessEnv, cpus?: string): RoleProcess {
    const command = [process.execPath, 'bin/tqa.js', ...args];
    // taskset execs the command, so the child is the tqa process itself.
    if (cpus !== undefined) command.unshift('taskset', '--cpu-list', cpus);
    // Its own process group, so a kill reaches every process it started.
    const child = spawn(command[0], command.slice(1), { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stdout!.resume();
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const proc = { child, stderr: () => err, exited };
    this.running.add(proc);
    return proc;
  }

  /** Signals the process's group and resolves with its exit code (null when a signal ended it). */
  async stop(proc: RoleProcess, signal: NodeJS.Signals): Promise<number | null> {
    signalGroup(proc.child, signal);
    const code = await proc.exited;
    this.running.delete(proc);
    return code;
  }

  /** Still running: those `keep` does not pick are killed (-9) first, then `keep`'s stopped with SIGTERM. */
  async stopAll(keep: (proc: RoleProcess) => boolean = () => false): Promise<void> {
    for (const proc of [...this.running].filter((p) => !keep(p))) await this.stop(proc, 'SIGKILL');
    for (const proc of [...this.running]) await this.stop(proc, 'SIGTERM');
  }

  all(): RoleProcess[] {
    return [...this.running];
  }
}

/** The input the quant engine's saved state covers, and the input there is, over every partition of its inputs. */
export async function engineProgress(log: EventLog): Promise<{ committed: number; end: number }> {
  let committed = 0;
  let end = 0;
  for (const topic of quantEngine.inputs) {
    for (const p of await log.committedOffsets(quantEngine.name, topic)) committed += p.offset;
    for (const p of await log.endOffsets(topic)) end += p.offset;
  }
  return { committed, end };
}


/** How long processors processes run between two looks at the engine's progress, taken while they are stopped. */
const RUN_SLICE_MS = 50;

/**
 * Kills (-9) the one of `processors` holding the quant engine once the engine has committed a
 * checkpoint, with input left for it; resolves with it. On Kafka the engine's state changes go
 * to its changelog before its group commits the input they cover, so a commit seen means a
 * changelog a standby restores from.
 * The history goes in two parts. The first is appended once every process has joined the
 * engine's group and one holds it (so that a re-balance as the others join does not replace
 * the holder that checkpoints it), while they are stopped. The rest is appended at the look
 * that finds the checkpoint, before the kill and while the holder is stopped: it cannot have
 * worked through it, however fast it ran up to there. Each look is taken with the processes
 * stopped (SIGSTOP); between looks they run in short slices.
 */
export async function killEngineHolderWithInputLeft(
  roles: RoleProcesses,
  processors: RoleProcess[],
  log: EventLog,
  history: Halves,
): Promise<RoleProcess> {
  await waitFor(() => soleEngineHolder(processors) !== undefined, "every processors process to join the engine's group, one holding it", 120_000);
  // Appended whole before the engine reads any of it: a partition read to its end does not
  // hold the others back, so reading a topic before the next is appended would change the order.
  for (const proc of processors) signalGroup(proc.child, 'SIGSTOP');
  try {
    await history.appendFirst();
  } finally {
    for (const proc of processors) signalGroup(proc.child, 'SIGCONT');
  }
  const deadline = Date.now() + 120_000;
  for (;;) {
    for (const proc of processors) signalGroup(proc.child, 'SIGSTOP');
    const holder = soleEngineHolder(processors);
    const checkpointed = holder !== undefined && (await engineProgress(log)).committed > 0;
    if (checkpointed) await history.appendRest();
    const code = checkpointed ? await roles.stop(holder, 'SIGKILL') : undefined;
    for (const proc of processors) signalGroup(proc.child, 'SIGCONT');
    if (code !== undefined && code !== null) throw new Error(`the processors process holding the engine had exited by itself, with code ${code}`);
    if (checkpointed) return holder;
    if (Date.now() > deadline) throw new Error('timed out waiting for the engine to commit a checkpoint');
    await sleep(RUN_SLICE_MS);
  }
}

/**
 * The one process holding the engine, by the processes' last joins of its group; undefined
 * while one has not joined yet or more than one says it holds it (a re-balance that not
 * every member has logged).
 */
function soleEngineHolder(processors: RoleProcess[]): RoleProcess | undefined {
  if (!processors.every((proc) => engineJoins(proc).length > 0)) return undefined;
  const holders = processors.filter(holdsEngine);
  return holders.length === 1 ? holders[0] : undefined;
}

/** On Kafka: whether the process's last join of the engine's group gave it the partitions (another member waits as a standby). */
export function holdsEngine(proc: RoleProcess): boolean {
  return engineJoins(proc).at(-1)?.includes('"ingest.posts":[0,1,2,3]') ?? false;
}

/** The process's joins of the engine's group, as kafkajs logs them with their assignment. */
export function engineJoins(proc: RoleProcess): string[] {
  return proc.stderr().split('\n').filter((line) => line.includes(`"groupId":"${quantEngine.name}"`) && line.includes('"memberAssignment"'));
}

/** When (epoch ms) the process's members last joined a group (kafkajs logs each join with its assignment); undefined before any. */
export function lastGroupJoin(proc: RoleProcess): number | undefined {
  const joins = proc.stderr().split('\n').filter((line) => line.includes('"memberAssignment"') && line.includes('"groupId"'));
  return joins.length > 0 ? Math.max(...joins.map((line) => Date.parse((JSON.parse(line) as { time: string }).time))) : undefined;
}

/** The quant engine's state restores from its changelog the process logged (on Kafka), with the records each read and its time. */
export function engineRestores(proc: RoleProcess): { restoredRecords: number; ms: number; time: string }[] {
  return proc
    .stderr()
    .split('\n')
    .filter((line) => line.includes('"msg":"task state brought up to date from its changelog"') && line.includes(`"processor":"${quantEngine.name}"`))
    .map((line) => JSON.parse(line) as { restoredRecords: number; ms: number; time: string });
}
