import { hash } from 'node:crypto';
import { EventLoopTurns } from '../../infra/event-loop/turns.ts';
import { inShare, type CommitOffset, type EventLog, type LogConsumer, type LogRecord, type OutgoingRecord, type PartitionShare, type TopicPartition } from '../../infra/log/port.ts';
import type { Logger } from '../../infra/logging.ts';
import { resolvesWithin } from '../../infra/wait.ts';
import { catalogueTopic, TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { RECORD_TYPES, type DeadLetter } from '../../schemas/records.ts';
import type { CheckpointStore } from './checkpoints/port.ts';
import { TaskTakenOverError } from './state/task-store.ts';
import type { OutputRecord, Processor, ProcessorContext } from './processor.ts';
import { stalledSince, type InputLook } from './stalled-input.ts';

export interface RuntimeOptions<State> {
  processor: Processor<State>;
  log: EventLog;
  codec: Codec;
  checkpoints: CheckpointStore;
  logger: Logger;
  /** Checkpoint a task at most this often while running (always on stop). */
  checkpointIntervalMs?: number;
  /**
   * The share of a task's time its checkpoints may take (default 0.05): checkpoints are at
   * least the last save's duration divided by this apart. A state that grows with history
   * (the analog library, every author's calls) is serialised whole; 1 leaves only the interval.
   */
  checkpointSaveShare?: number;
  /**
   * Records a task must be seen behind its inputs' ends for its work to count as a long backlog
   * (default 100,000): a task that works through one saves a checkpoint as soon as it reaches
   * the ends, whatever the spacing, so its committed lag shows it caught up at once.
   */
  backlogRecords?: number;
  /**
   * The same for a short backlog (default 1,000, what `tqa start`'s health still calls caught
   * up): at its end the task saves once a quarter of checkpointIntervalMs has passed since its
   * last save, and its save-cost spacing, rather than the whole interval. Bursts of live input
   * that make one stay within checkpointSaveShare.
   */
  shortBacklogRecords?: number;
  maxBatchRecords?: number;
  /** How often a task waiting on an idle input re-checks whether that input is at its end. */
  idleCheckMs?: number;
  /**
   * How often it does once the runtime has had nothing to do for QUIET_AFTER_MS (default
   * 1,000 ms, at least idleCheckMs): on Kafka each check reads end offsets from the broker, and
   * a stage that waits (a standby, one caught up) would spend a share of a core on them.
   */
  idleCheckQuietMs?: number;
  /**
   * For a processor with a task per partition: the partitions this runtime takes on the file
   * log, where runtimes on several threads split them (ConsumerOptions.share). Default: all.
   */
  share?: PartitionShare;
  /**
   * For a single-task processor on Kafka: which of the processes running it holds its task
   * (ConsumerOptions.exclusive); single-task processors given different slots spread over
   * the processes. Default 0.
   */
  exclusiveSlot?: number;
  /** How often the runtime looks for work held up for long (a job, a commit, an input that fetches nothing), and warns. */
  watchMs?: number;
}

/** Outputs a task gathers before handing them to the log, once its previous ones are durable. */
const OUTPUT_CHUNK = 2_000;
/** The least time between two progress commits of a task (commitProgress()). */
const PROGRESS_COMMIT_MS = 200;
/** How long a read of the upstream's progress may take before another one replaces it. */
const UPSTREAM_READ_TIMEOUT_MS = 10_000;
/** Outputs a task may gather while its previous ones are still being written; it then waits for them. */
const MAX_GATHERED_OUTPUTS = 50_000;
/**
 * How long a job on the tasks' queue waits for a read of end offsets before it leaves the task
 * waiting for the next idle check or batch: a read the broker never answers (kafkajs retries a
 * timed-out request for minutes) must not hold every task, and a stop, behind it.
 */
const END_READ_WAIT_MS = 5_000;
/**
 * How long a stop waits for the offset commits in line. One not made leaves the group's offsets
 * behind the saved checkpoint, which the next start resumes from and commits again.
 */
const COMMITS_ON_STOP_WAIT_MS = 10_000;
/** The share of checkpointIntervalMs after which a task at the end of a short backlog saves (RuntimeOptions.shortBacklogRecords). */
const SHORT_BACKLOG_INTERVAL_SHARE = 0.25;
/** Nothing handled, fetched or read anew for this long: the idle checks go to their quiet interval. */
const QUIET_AFTER_MS = 1_000;
/** Default of RuntimeOptions.watchMs: a job, a commit or a stalled input held up this long is logged, and again as long as it is. */
const WATCH_MS = 30_000;

/** Fetched records of one input of a task, not yet processed, in offset order. */
class InputQueue {
  private records: LogRecord[] = [];
  private head = 0;
  /** Next offset the consumer is expected to deliver. */
  fetched: number;
  /** Set after seeking to a position the log has no record at (retention, compaction gaps). */
  seekedTo = -1;

  constructor(position: number) {
    this.fetched = position;
  }
  push(record: LogRecord): void {
    this.records.push(record);
    this.fetched = record.offset + 1;
  }
  peek(): LogRecord | undefined {
    return this.records[this.head];
  }
  shift(): void {
    if (++this.head > 1024 && this.head * 2 > this.records.length) {
      this.records = this.records.slice(this.head);
      this.head = 0;
    }
  }
  get size(): number {
    return this.records.length - this.head;
  }
}

/** What a processor downstream knows of its upstreams' progress (Processor.upstreams). */
interface UpstreamProgress {
  /** Every upstream has handled every input before this event time, and its outputs timed before it are in the log. */
  before: number;
  /** Per topic an upstream writes, end offsets read after `before`: they include every such output. */
  ends: Map<string, number[]>;
  /** When it was read (Date.now()). */
  at: number;
}

/** An output of a task encoded for the log, waiting to be appended. */
interface EncodedOutput extends OutgoingRecord {
  topic: string;
  value: Buffer;
}

/** An input a task waits on that fetched nothing for a while (see watchLongRunning()). */
interface StalledInput {
  task: number;
  topic: string;
  partition: number;
  /** Next offset expected from the consumer, and the partition's end offset as last read. */
  fetched: number;
  end: number;
  /** Whether this member holds the partition; false: another member does, and the task here waits in vain. */
  held: boolean;
}

/** One input partition of a task, named `<topic>#<partition>`. */
interface Source {
  id: string;
  topic: string;
  partition: number;
}

interface Task<State> {
  id: number;
  state: State;
  sources: Source[];
  /** Next offset to process per source: what the state covers. */
  positions: Record<string, number>;
  queues: Map<string, InputQueue>;
  /** The same queues in the order of sources, for the per-record merge. */
  inputs: InputQueue[];
  maxEventTime: number;
  /**
   * The upstreams' progress once the task had handled every record before it (noteDrained()):
   * it has then handled through that time though its own inputs stop earlier. Not saved.
   */
  drainedThrough: number;
  /** The positions of the last checkpoint saved (or loaded): what a progress commit commits. */
  checkpointed: Record<string, number>;
  /** The event time the group's offsets were last committed with (commitProgress()). */
  progressThrough: number;
  watermark: number;
  dirty: boolean;
  lastCheckpointAt: number;
  /** How long the last checkpoint took to save (the whole state is serialised each time). */
  lastSaveMs: number;
  /** The most records it has been seen behind its inputs' ends since it was last at them with nothing left to save. */
  backlog: number;
  /** The positions of the last checkpoint while the group has not taken them (a commit failed or is in flight). */
  uncommitted: CommitOffset[] | undefined;
  lastCommitAt: number;
  /** A commit of this task waits in line: when its turn comes it sends `uncommitted`, the latest positions. */
  commitQueued: boolean;
  /** An idle check of this task waits on the tasks' queue: the next one is not queued behind it. */
  idleCheckQueued: boolean;
}

/**
 * Drives one pure processor over the log (DESIGN.md §3, rule 1).
 *
 * Each partition of the inputs is a task with its own state (or, for `single` processors,
 * one task reads them all). Records of a task's input partitions are merged in event-time
 * order (ties: input order, then partition); a record waits while another input partition
 * of the task still has unread records, so the order, and with it every output, depends
 * only on the log's content, never on fetch timing. An input partition read to its end
 * does not hold the others back (live operation: an event arriving later on it with an
 * older time is handled as late).
 *
 * Outputs are produced before the task's checkpoint (state + input positions) is saved, so
 * a crash repeats outputs but never loses one; repeated outputs carry the same ids because
 * ids derive from the inputs. Records that fail decoding, validation or the processor go to
 * the dead-letter topic with the reason; the loop goes on.
 */
export class ProcessorRuntime<State> {
  private readonly processor: Processor<State>;
  /** How often idle tasks look for input, and how old end offsets may be to say an input is at its end. */
  private readonly idleCheckMs: number;
  /** How often they look once the runtime has been quiet (RuntimeOptions.idleCheckQuietMs). */
  private readonly idleCheckQuietMs: number;
  /** When a batch last came, an idle check last handled a record, or a read of ends or of the upstreams' progress last found them moved. */
  private activeAt = 0;
  /** Records handled when the last idle check began. */
  private handledAtLastIdleCheck = 0;
  /** When the idle check scheduled runs. */
  private idleCheckAt = 0;
  /** How often the watch looks for work held up for long (RuntimeOptions.watchMs). */
  private readonly watchMs: number;
  /** Records handled (processed or dead-lettered) when the watch last looked. */
  private handledAtLastWatch = 0;
  private readonly tasks = new Map<number, Task<State>>();
  private consumer: LogConsumer | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private idleTimer: NodeJS.Timeout | undefined;
  /** Per input topic, its end offsets by partition as last read (`at`: when that read began), and the read in flight. */
  private readonly endOffsets = new Map<string, { at: number; ends: number[] }>();
  private readonly endOffsetReads = new Map<string, Promise<void>>();
  private readonly logger: Logger;
  private running: Promise<void> | undefined;
  private stopping = false;
  /** Commits of checkpointed positions, one after the other, in checkpoint order. */
  private commits: Promise<void> = Promise.resolve();
  /** When the job on the tasks' queue, and the commit in flight, began (see watchLongRunning()). */
  private readonly busySince: { job?: number; commit?: number } = {};
  private watchTimer: NodeJS.Timeout | undefined;
  /** Per input (a source belongs to one task), how it stood at the last watch (see stalledInputs()). */
  private inputsAtLastWatch = new Map<string, InputLook>();
  /** Topics whose schema the codec has registered: outputs to them are encoded without waiting. */
  private readonly registered = new Set<string>();
  /** Per task id, the latest outputs handed to the log (send()); resolves once they are durable. */
  private readonly producing = new Map<number, Promise<void>>();
  /** Per task id, its latest outputs handed to the log while they are still being written. */
  private readonly writing = new Map<number, Promise<void>>();
  /** Tasks working through their queues (they may hold gathered outputs not yet handed to the log). */
  private advancing = 0;
  /** Outputs handed to the log and not yet durable, in produce() calls. */
  private unsent = 0;
  /** The input topics the upstream processors write (Processor.upstreams); empty without one. */
  private readonly gated: ReadonlySet<string>;
  /** The partitions this runtime takes (RuntimeOptions.share); undefined: all of them. */
  private readonly share: PartitionShare | undefined;
  /** How far the upstreams have finished, as last read; see readUpstream(). */
  private upstream: UpstreamProgress = { before: -Infinity, ends: new Map(), at: 0 };
  /** The read of the upstream's progress in flight, by when it started. */
  private upstreamRead: { startedAt: number } | undefined;
  private upstreamReadFailing = false;
  /** Counters for metrics and benchmarks. */
  readonly stats = { processed: 0, deadLettered: 0, produced: 0 };

  constructor(private readonly options: RuntimeOptions<State>) {
    this.processor = options.processor;
    this.idleCheckMs = options.idleCheckMs ?? 100;
    this.idleCheckQuietMs = Math.max(this.idleCheckMs, options.idleCheckQuietMs ?? 1_000);
    this.watchMs = options.watchMs ?? WATCH_MS;
    this.logger = options.logger.child({ processor: options.processor.name });
    const upstreamOutputs = new Set(this.processor.upstreams?.flatMap((u) => u.outputs));
    this.gated = new Set(this.processor.inputs.filter((topic) => upstreamOutputs.has(topic)));
    // A single task reads every partition: a share means nothing to it.
    this.share = this.processor.parallelism === 'partition' ? options.share : undefined;
  }

  /** Starts consuming; resolves once the consumer has stopped. */
  start(): Promise<void> {
    const { log, processor } = this.options;
    this.consumer = log.consumer({
      groupId: processor.name,
      topics: [...processor.inputs],
      fromBeginning: true,
      maxBatchRecords: this.options.maxBatchRecords,
      // Batches are only queued for the event-time merge when the handler returns: the
      // group's offsets may say no more than what a saved checkpoint covers (checkpoint()).
      autoCommit: false,
      exclusive: this.processor.parallelism === 'single' ? { slot: this.options.exclusiveSlot ?? 0 } : undefined,
      share: this.share,
      // A partition resumes where its task's checkpoint is, whatever the group committed.
      startPosition: async (topic, partition) => {
        const task = await this.serial(() => this.task(this.taskId(partition)));
        return task.positions[sourceId(topic, partition)];
      },
      onRevoked: () => void this.serial(async () => this.dropHandedOver()),
    });
    this.watchTimer = setInterval(() => this.watchLongRunning(), this.watchMs).unref();
    this.activeAt = Date.now();
    this.scheduleIdleCheck();
    this.running = this.consumer.run((batch) =>
      this.serial(async () => {
        this.noteActive();
        try {
          await this.accept(batch.topic, batch.partition, batch.records);
        } catch (err) {
          this.forget(this.taskId(batch.partition), err);
          throw err;
        }
      }),
    );
    return this.running;
  }

  /** Queues an advance of every task, then schedules the next check. */
  private idleCheck(): void {
    const handled = this.stats.processed + this.stats.deadLettered;
    if (handled !== this.handledAtLastIdleCheck) this.activeAt = Date.now();
    this.handledAtLastIdleCheck = handled;
    for (const task of this.tasks.values()) {
      // One queued per task: a long job ahead (a batch through a backlog) would otherwise gather them by the hundred.
      if (task.idleCheckQueued) continue;
      task.idleCheckQueued = true;
      void this.serial(async () => {
        task.idleCheckQueued = false;
        if (!this.stopping) await this.advance(task);
      }).catch((err: unknown) => this.forget(task.id, err));
    }
    this.scheduleIdleCheck();
  }

  private scheduleIdleCheck(): void {
    if (this.stopping) return;
    const delay = Date.now() - this.activeAt < QUIET_AFTER_MS ? this.idleCheckMs : this.idleCheckQuietMs;
    this.idleCheckAt = Date.now() + delay;
    this.idleTimer = setTimeout(() => this.idleCheck(), delay);
  }

  /** Something came or moved: the idle checks go back to their short interval, the next one within it. */
  private noteActive(): void {
    this.activeAt = Date.now();
    if (this.idleCheckAt - this.activeAt <= this.idleCheckMs) return;
    clearTimeout(this.idleTimer);
    this.scheduleIdleCheck();
  }

  /**
   * After a failure the task's state may cover records whose outputs were not produced:
   * drop it and read every input partition of the task again from its checkpoint (one
   * already read to its end would otherwise never deliver the records the task needs).
   */
  private forget(taskId: number, err: unknown): void {
    if (err instanceof TaskTakenOverError) this.logger.warn({ err, task: taskId }, 'another process took the task over while this one held it; resuming from its last commit if this one holds it still');
    else this.logger.error({ err, task: taskId }, 'task failed; resuming from its checkpoint');
    this.tasks.delete(taskId);
    // The outputs in flight belong to the dropped state: the task's next ones wait for them
    // (appends stay in order) but not for their success, which the replay redoes.
    const inFlight = this.producing.get(taskId);
    if (inFlight) this.producing.set(taskId, inFlight.catch(() => undefined));
    void this.serial(() => this.rewind(taskId)).catch((rewindErr: unknown) => {
      // Stopping, or the checkpoint is unreadable: the next batch for the task tries again.
      this.logger.warn({ err: rewindErr, task: taskId }, 'rewinding the task to its checkpoint failed');
      this.tasks.delete(taskId);
    });
  }

  private async rewind(taskId: number): Promise<void> {
    if (this.stopping) return;
    const held = this.consumer!.assignment();
    // Handed over meanwhile: loading it would take the task from the member that holds it now.
    if (!(await this.sourcesOf(taskId)).some((source) => isHeld(held, source))) return;
    const task = await this.task(taskId);
    for (const source of task.sources) {
      if (!isHeld(held, source)) continue;
      const queue = task.queues.get(source.id)!;
      queue.seekedTo = queue.fetched;
      this.consumer!.seek(source.topic, source.partition, queue.fetched);
    }
  }

  /**
   * Finishes the batch in hand, produces its outputs, checkpoints every task and commits
   * what the checkpoints cover; batches delivered after that are left for the next start.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.idleTimer);
    // The watch goes on until the consumer has stopped: a stop held up by a job or a commit names it.
    try {
      await this.serial(async () => {
        for (const task of this.tasks.values()) {
          // Outputs that failed to reach the log leave the previous checkpoint in place.
          await this.checkpoint(task).catch((err: unknown) => this.logger.error({ err, task: task.id }, 'checkpoint on stop failed'));
        }
      });
      if (!(await resolvesWithin(this.commits, COMMITS_ON_STOP_WAIT_MS))) {
        this.logger.warn({ waitedMs: COMMITS_ON_STOP_WAIT_MS }, 'the offset commits on stop did not finish in time; stopped without them, and the next start resumes from the saved checkpoints and commits them');
      }
      await this.consumer?.stop();
      await this.running?.catch(() => undefined);
    } finally {
      clearInterval(this.watchTimer);
    }
  }

  /** True when every input partition of its share has been processed up to its current end and its outputs are in the log. */
  async caughtUp(): Promise<boolean> {
    if (this.unsent > 0 || this.advancing > 0) return false; // outputs gathered or in flight
    for (const topic of this.processor.inputs) {
      const ends = await this.options.log.endOffsets(topic);
      for (const { partition, offset } of ends) {
        if (offset === 0 || !inShare(partition, this.share)) continue;
        const task = this.tasks.get(this.taskId(partition));
        if (!task || task.positions[sourceId(topic, partition)] < offset) return false;
      }
    }
    return true;
  }

  private taskId(partition: number): number {
    return this.processor.parallelism === 'single' ? 0 : partition;
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      this.busySince.job = Date.now();
      try {
        return await fn();
      } finally {
        this.busySince.job = undefined;
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * A stage that stands still with input left logs nothing by itself: say so when the tasks'
   * queue has been held by one job for long without a record handled since the last look
   * (a batch working through a backlog holds it for long too, handling records all along),
   * or the line of commits by one commit, or a task's input had records in the log at the
   * last look and none came since, with what was held.
   */
  private watchLongRunning(): void {
    const now = Date.now();
    const { job, commit } = this.busySince;
    const assigned = this.consumer?.assignment().length ?? 0;
    const handled = this.stats.processed + this.stats.deadLettered;
    const handledSinceLastLook = handled !== this.handledAtLastWatch;
    this.handledAtLastWatch = handled;
    if (job !== undefined && now - job >= this.watchMs && !handledSinceLastLook) {
      this.logger.warn({ runningMs: now - job, tasks: this.tasks.size, assigned, advancing: this.advancing, unsent: this.unsent }, 'a job on the tasks\' queue (a batch, an idle check or a task load) is taking long; every task waits behind it');
    }
    if (commit !== undefined && now - commit >= this.watchMs) {
      this.logger.warn({ runningMs: now - commit, assigned }, 'an offset commit is taking long; later commits wait behind it');
    }
    const stalled = this.stalledInputs();
    if (stalled.length > 0) {
      this.logger.warn({ inputs: stalled, assigned }, 'inputs with records left in the log fetched nothing since the last look, and their tasks wait on them (held: false means another member of the group holds the partition)');
    }
  }

  /**
   * The inputs of the current tasks that have fetched nothing since the last look although the
   * log then had records for them, and have none queued (see stalledSince()).
   */
  private stalledInputs(): StalledInput[] {
    const stalled: StalledInput[] = [];
    const held = this.consumer?.assignment() ?? [];
    const lastLooks = this.inputsAtLastWatch;
    this.inputsAtLastWatch = new Map();
    for (const task of this.tasks.values()) {
      task.sources.forEach((source, i) => {
        const look: InputLook = { fetched: task.inputs[i].fetched, queued: task.inputs[i].size, end: this.lastReadEnds(source.topic)?.[source.partition] };
        this.inputsAtLastWatch.set(source.id, look);
        if (!stalledSince(lastLooks.get(source.id), look)) return;
        stalled.push({ task: task.id, topic: source.topic, partition: source.partition, fetched: look.fetched, end: look.end, held: isHeld(held, source) });
      });
    }
    return stalled;
  }

  private async accept(topic: string, partition: number, records: LogRecord[]): Promise<void> {
    if (this.stopping) return;
    const task = await this.task(this.taskId(partition));
    const queue = task.queues.get(sourceId(topic, partition))!;
    const first = records[0]?.offset;
    if (first !== undefined && first > queue.fetched) {
      // Compaction leaves gaps; elsewhere records between are missing only once retention deleted them.
      const compacted = catalogueTopic(topic)?.cleanupPolicy === 'compact';
      if (queue.seekedTo !== queue.fetched || (!compacted && (await this.retains(topic, partition, queue.fetched)))) {
        // The consumer is ahead of the state (its commit is newer than the checkpoint, there
        // is no checkpoint, or a batch fetched before the last seek arrived after it): rewind
        // to what the state covers. This batch comes again.
        queue.seekedTo = queue.fetched;
        this.consumer!.seek(topic, partition, queue.fetched);
        return;
      }
      if (!compacted) {
        // Sought to the state's position and handed later records, and the log no longer has
        // the ones between. Nothing can redo them; say so.
        this.logger.warn({ topic, partition, from: queue.fetched, to: first - 1 }, 'input records the state needs are no longer in the log; continuing after them');
      }
    }
    for (const record of records) if (record.offset >= queue.fetched) queue.push(record);
    await this.advance(task);
  }

  /** Whether the log still holds the partition's record at `offset` (retention has not deleted it). */
  private async retains(topic: string, partition: number, offset: number): Promise<boolean> {
    const start = (await this.options.log.startOffsets(topic)).find((p) => p.partition === partition);
    return start !== undefined && start.offset <= offset;
  }

  /**
   * Processes every record the merge order allows and checkpoints when due, always after
   * producing. Outputs are handed to the log in chunks of at least OUTPUT_CHUNK (a backlog
   * read in one fetch neither piles up in memory nor waits for its end to be produced);
   * while the previous chunk is still being written the task goes on gathering, up to
   * MAX_GATHERED_OUTPUTS, so processing and writing overlap and a slow write makes the
   * next one bigger rather than stalling the task.
   */
  private async advance(task: Task<State>): Promise<void> {
    // Jobs queued before the task failed still hold it; its state is dropped (forget()).
    if (!this.isCurrent(task)) return;
    this.advancing++;
    try {
      await this.advanceTask(task);
    } finally {
      this.advancing--;
    }
  }

  private async advanceTask(task: Task<State>): Promise<void> {
    const outputs: EncodedOutput[] = [];
    // The log's writes and end reads in flight go on only in the event loop's turns.
    const turns = new EventLoopTurns();
    for (;;) {
      let next = this.nextSource(task);
      if (typeof next !== 'number') next = await next; // awaiting a plain number would still cost a tick
      if (next < 0) {
        this.noteDrained(task);
        break;
      }
      const record = task.inputs[next].peek()!;
      task.inputs[next].shift();
      await this.handle(task, task.sources[next], record, outputs);
      const turn = turns.due();
      if (turn) await turn;
      if (outputs.length >= OUTPUT_CHUNK && (outputs.length >= MAX_GATHERED_OUTPUTS || !this.writing.has(task.id))) {
        await this.send(task, outputs.splice(0));
        await this.checkpointIfDue(task);
      }
    }
    if (outputs.length > 0) await this.send(task, outputs);
    if (this.leftBacklog(task)) await this.checkpoint(task);
    else await this.checkpointIfDue(task);
    this.commitProgress(task);
  }

  /**
   * Tells the processors downstream how far this task's outputs are in the log between its
   * checkpoints, which a growing state spaces seconds apart: once the outputs handed to the
   * log so far are durable, the group commits the last checkpoint's positions again, with the
   * event time the task has handled through as the metadata the downstream joins read
   * (readUpstream()). A restart still resumes from the checkpoint and repeats the outputs
   * after it with the same ids; the processors downstream drop them as repeats. At most one
   * such commit per PROGRESS_COMMIT_MS per task.
   */
  private commitProgress(task: Task<State>): void {
    const through = handledThrough(task);
    if (through <= task.progressThrough || Date.now() - task.lastCommitAt < PROGRESS_COMMIT_MS) return;
    void (this.producing.get(task.id) ?? Promise.resolve()).then(
      () => {
        if (!this.isCurrent(task) || through <= task.progressThrough) return;
        task.progressThrough = through;
        this.commit(task, covered(task.sources, task.checkpointed, through));
      },
      () => undefined, // the task fails at its next send or checkpoint
    );
  }

  /**
   * Whether the task has worked through a backlog to its inputs' ends and saves now, by the end
   * offsets the merge last read (an input that never ran empty has none: not at its end yet), or
   * for an upstream's topic those read with its progress: at once after a long one, after a
   * short one once its spacing allows (a later advance at the ends saves it). One save per
   * backlog: live input, a few records behind at a time, never makes one.
   */
  private leftBacklog(task: Task<State>): boolean {
    let behind = 0;
    let unknown = false;
    for (const { id, topic, partition } of task.sources) {
      const ends = this.lastReadEnds(topic);
      if (ends) behind += Math.max(0, ends[partition] - task.positions[id]);
      else unknown = true;
    }
    task.backlog = Math.max(task.backlog, behind);
    if (behind > 0 || unknown) return false;
    const long = task.backlog >= (this.options.backlogRecords ?? 100_000);
    const short = task.backlog >= (this.options.shortBacklogRecords ?? 1_000);
    const shortSpacingMs = Math.max(this.saveCostSpacingMs(task), (this.options.checkpointIntervalMs ?? 5000) * SHORT_BACKLOG_INTERVAL_SHARE);
    if (short && !long && task.dirty && Date.now() - task.lastCheckpointAt < shortSpacingMs) return false;
    task.backlog = 0;
    return (long || short) && task.dirty;
  }

  /** The least time between two checkpoints of the task for its saves to take at most checkpointSaveShare of its time. */
  private saveCostSpacingMs(task: Task<State>): number {
    return task.lastSaveMs / (this.options.checkpointSaveShare ?? 0.05);
  }

  /** A topic's end offsets by partition as last read: for an upstream's topic, those read with its progress. */
  private lastReadEnds(topic: string): number[] | undefined {
    return this.gated.has(topic) ? this.upstream.ends.get(topic) : this.endOffsets.get(topic)?.ends;
  }

  /**
   * Hands outputs to the log once the task's previous ones are durable, and returns without
   * waiting for these: the task goes on processing while the log writes and syncs them. One
   * append per task in flight keeps its outputs in order on every adapter; a checkpoint waits
   * for them (checkpoint()), and a failure surfaces at the task's next send or checkpoint.
   */
  private async send(task: Task<State>, outputs: EncodedOutput[]): Promise<void> {
    await this.producing.get(task.id);
    const produced = this.produce(outputs);
    this.writing.set(task.id, produced);
    // A failure is handled where the task next waits for these outputs.
    const settled = (): void => {
      if (this.writing.get(task.id) === produced) this.writing.delete(task.id);
    };
    produced.then(settled, settled);
    this.producing.set(task.id, produced);
  }

  private async checkpointIfDue(task: Task<State>): Promise<void> {
    const interval = Math.max(this.options.checkpointIntervalMs ?? 5000, this.saveCostSpacingMs(task));
    if (task.dirty && Date.now() - task.lastCheckpointAt >= interval) await this.checkpoint(task);
    // A task with nothing new to save would otherwise never offer its last positions again.
    // Only while this member holds some of its partitions: a standby's is the holder's to commit.
    else if (!task.dirty && task.uncommitted && Date.now() - task.lastCommitAt >= interval && this.holdsAny(task)) this.commit(task, task.uncommitted);
  }

  /**
   * Drops the tasks whose partitions a re-balance gave to another member: their owner's state
   * is the one that advances now, and this one, kept, would go on costing memory and be saved
   * over the owner's newer checkpoint on stop.
   */
  private dropHandedOver(): void {
    for (const task of [...this.tasks.values()]) {
      if (this.holdsAny(task)) continue;
      this.tasks.delete(task.id);
      this.logger.info({ task: task.id }, 'task handed over to another member; its state here is dropped');
    }
  }

  private holdsAny(task: Task<State>): boolean {
    const held = this.consumer?.assignment() ?? [];
    return task.sources.some((source) => isHeld(held, source));
  }

  private holdsAll(task: Task<State>): boolean {
    const held = this.consumer?.assignment() ?? [];
    return task.sources.every((source) => isHeld(held, source));
  }

  /**
   * Index in task.sources of the input whose head record comes next in event time, or -1
   * while an input with no fetched record may still hold an earlier one. Per record, so it
   * allocates nothing and awaits only when an empty input's end offsets must be read again.
   */
  private nextSource(task: Task<State>, maxEndAgeMs = this.idleCheckMs): number | Promise<number> {
    let best = -1;
    let bestTs = 0;
    let upstreamBehind = false;
    for (let i = 0; i < task.inputs.length; i++) {
      const head = task.inputs[i].peek();
      if (!head && this.gated.has(task.sources[i].topic)) {
        // Written by the upstream: at its end only by ends read after the upstream's progress.
        const { topic, partition } = task.sources[i];
        if (task.inputs[i].fetched < (this.upstream.ends.get(topic)?.[partition] ?? Infinity)) upstreamBehind = true;
        continue;
      }
      if (!head) {
        const atEnd = this.knownAtEnd(task.sources[i], task.inputs[i].fetched, maxEndAgeMs);
        if (atEnd === undefined) {
          // Any end offsets read since now will do, so this read (or one in flight) is enough.
          const asked = Date.now();
          return resolvesWithin(this.refreshEnds(task.sources[i].topic), END_READ_WAIT_MS).then((read) =>
            read ? this.nextSource(task, Math.max(maxEndAgeMs, Date.now() - asked)) : -1,
          );
        }
        if (!atEnd) return -1; // this input partition may still hold earlier records
        continue;
      }
      if (best < 0 || head.timestamp < bestTs) {
        best = i;
        bestTs = head.timestamp;
      }
    }
    if (this.gated.size === 0 || (!upstreamBehind && (best < 0 || bestTs <= this.upstream.before))) return best;
    // The upstream may still write records this one must come after: read its progress again,
    // and let the next idle check go on from there.
    this.readUpstream();
    return -1;
  }

  /**
   * How far the upstream processors have finished: the event time of the last input each
   * group's committed positions cover (the runtime commits it as the offsets' metadata), the
   * least of them, and then the ends of the topics they write. Every output one timed before
   * that time is within those ends, since it commits only positions whose outputs are in the
   * log. Partitions of a processor with several tasks are committed by each, so the least of
   * their times counts, and one not committed yet holds everything back.
   */
  private readUpstream(): void {
    const now = Date.now();
    if (now - this.upstream.at < this.idleCheckMs) return;
    // One read at a time, off the tasks' queue: a request the broker never answers (it froze
    // mid-request) holds up only the join, and after UPSTREAM_READ_TIMEOUT_MS a new read.
    if (this.upstreamRead && now - this.upstreamRead.startedAt < UPSTREAM_READ_TIMEOUT_MS) return;
    const read = { startedAt: now };
    this.upstreamRead = read;
    void (async () => {
      const { log } = this.options;
      let before = Infinity;
      for (const upstream of this.processor.upstreams!) {
        for (const topic of upstream.inputs) {
          const commits = await log.committedOffsets(upstream.name, topic);
          if (commits.length < (catalogueTopic(topic)?.partitions ?? 0)) before = -Infinity;
          for (const { metadata } of commits) before = Math.min(before, handledThroughIn(metadata));
        }
      }
      const ends = new Map<string, number[]>();
      for (const topic of this.gated) {
        const offsets = await log.endOffsets(topic);
        ends.set(topic, offsets.sort((a, b) => a.partition - b.partition).map((e) => e.offset));
      }
      // A read given up on is older than the one that replaced it: it says nothing new.
      if (this.upstreamRead !== read) return;
      const progress = before === Infinity ? -Infinity : before;
      if (progress !== this.upstream.before || [...ends].some(([topic, offsets]) => !sameOffsets(offsets, this.upstream.ends.get(topic)))) this.noteActive();
      this.upstream = { before: progress, ends, at: read.startedAt };
      this.upstreamReadFailing = false;
    })()
      .catch((err: unknown) => {
        if (!this.upstreamReadFailing) this.logger.warn({ err, upstreams: this.processor.upstreams!.map((u) => u.name) }, "reading the upstreams' progress failed; trying again at each idle check");
        this.upstreamReadFailing = true;
      })
      .finally(() => {
        if (this.upstreamRead === read) this.upstreamRead = undefined;
      });
  }

  /**
   * Whether position is the end of the source by end offsets read at most maxAgeMs ago;
   * undefined when there are none that recent. Ends only grow, so an older read still proves
   * a source is not at its end. The read is renewed in the background from half the usual
   * age: reading waits for the log's appends in flight, and the merge should not.
   */
  private knownAtEnd({ topic, partition }: Source, position: number, maxAgeMs: number): boolean | undefined {
    const cached = this.endOffsets.get(topic);
    if (!cached) return undefined;
    const age = Date.now() - cached.at;
    if (age >= this.idleCheckMs / 2) void this.refreshEnds(topic).catch(() => undefined);
    if (position < cached.ends[partition]) return false;
    return age <= maxAgeMs ? true : undefined;
  }

  private refreshEnds(topic: string): Promise<void> {
    const inFlight = this.endOffsetReads.get(topic);
    if (inFlight) return inFlight;
    const startedAt = Date.now(); // the ends are as of then: appends after it may be missing
    const read = this.options.log
      .endOffsets(topic)
      .then((ends) => {
        ends.sort((a, b) => a.partition - b.partition);
        const offsets = ends.map((e) => e.offset);
        if (!sameOffsets(offsets, this.endOffsets.get(topic)?.ends)) this.noteActive();
        this.endOffsets.set(topic, { at: startedAt, ends: offsets });
      })
      .finally(() => this.endOffsetReads.delete(topic));
    this.endOffsetReads.set(topic, read);
    return read;
  }

  /**
   * Processes one record and appends its outputs, encoded, to `encoded`: the values die young
   * (a chunk gathered for the log holds bytes, which the collector does not trace), and an
   * output its topic's schema refuses dead-letters the record like any processor failure.
   */
  private async handle(task: Task<State>, source: Source, record: LogRecord, encoded: EncodedOutput[]) {
    const { topic } = source;
    const outputs: OutputRecord[] = [];
    task.positions[source.id] = record.offset + 1;
    task.dirty = true;
    let value: unknown = null;
    if (record.value !== null) {
      try {
        const decoded = await this.options.codec.decode(topic, record.value);
        const validated = RECORD_TYPES[catalogueTopic(topic)!.valueType].safeParse(decoded);
        if (!validated.success) {
          const issues = validated.error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`);
          throw new Error(`validation failed: ${issues.join('; ')}`);
        }
        value = validated.data;
      } catch (err) {
        await this.encode([this.deadLetter(record, (err as Error).message)], encoded);
        return;
      }
    }
    const ctx = this.context(task, record.timestamp, outputs, record);
    const mark = encoded.length;
    try {
      this.processor.process(
        task.state,
        { topic, partition: record.partition, offset: record.offset, key: record.key, timestamp: record.timestamp, value },
        ctx,
      );
      await this.encode(outputs, encoded);
    } catch (err) {
      // Not the record's fault: the task is no longer this process's to run.
      if (err instanceof TaskTakenOverError) throw err;
      encoded.length = mark;
      await this.encode([this.deadLetter(record, `processor ${this.processor.name} failed: ${(err as Error).message}`)], encoded);
      return;
    }
    this.stats.processed++;
    if (record.timestamp > task.maxEventTime) {
      task.maxEventTime = record.timestamp;
      const watermark = task.maxEventTime - this.processor.allowedLatenessMs;
      if (watermark > task.watermark) {
        task.watermark = watermark;
        outputs.length = 0;
        this.processor.onWatermark?.(task.state, watermark, this.context(task, watermark, outputs));
        await this.encode(outputs, encoded);
      }
    }
  }

  /** Encodes outputs onto `encoded`, registering the schema of a topic met for the first time. */
  private async encode(outputs: OutputRecord[], encoded: EncodedOutput[]): Promise<void> {
    const { codec } = this.options;
    for (const o of outputs) {
      if (!this.registered.has(o.topic)) {
        await codec.registerTopics([o.topic]);
        this.registered.add(o.topic);
      }
      let value: Buffer;
      try {
        value = codec.encodeSync(o.topic, o.value);
      } catch (err) {
        throw new Error(`its output to ${o.topic} does not fit the topic's schema: ${(err as Error).message}`);
      }
      encoded.push({ topic: o.topic, key: o.key, value, timestamp: o.timestamp });
    }
  }

  private context(task: Task<State>, eventTime: number, outputs: OutputRecord[], record?: LogRecord): ProcessorContext {
    return new RecordContext(eventTime, task.watermark, outputs, record, this.toDeadLetter);
  }

  private readonly toDeadLetter = (record: LogRecord, reason: string): OutputRecord => this.deadLetter(record, reason);

  private deadLetter(record: LogRecord, reason: string): OutputRecord {
    this.stats.deadLettered++;
    this.logger.warn({ topic: record.topic, partition: record.partition, offset: record.offset, reason }, 'dead-lettered');
    const letter: DeadLetter = {
      source: record.topic,
      partition: record.partition,
      offset: record.offset,
      line: null,
      stage: this.processor.name,
      reason,
      key: record.key,
      payload: record.value,
      ts: record.timestamp,
    };
    return { topic: TOPICS.deadLetters.name, key: record.topic, value: letter, timestamp: record.timestamp };
  }

  private async produce(outputs: EncodedOutput[]): Promise<void> {
    this.unsent += outputs.length;
    try {
      const byTopic = new Map<string, OutgoingRecord[]>();
      for (const o of outputs) {
        const list = byTopic.get(o.topic);
        if (list) list.push(o);
        else byTopic.set(o.topic, [o]);
      }
      await Promise.all([...byTopic].map(([topic, records]) => this.options.log.append(topic, records)));
      this.stats.produced += outputs.length;
    } finally {
      this.unsent -= outputs.length;
    }
  }

  /** Saves the task's state with the positions it covers, then commits those positions to the group. */
  private async checkpoint(task: Task<State>): Promise<void> {
    await this.producing.get(task.id);
    // A dropped state may cover records whose outputs never reached the log: saving it would lose them.
    if (!this.isCurrent(task)) return;
    if (task.dirty) {
      const started = performance.now();
      await this.options.checkpoints.save(this.processor.name, task.id, {
        stateVersion: this.processor.stateVersion,
        positions: task.positions,
        maxEventTime: task.maxEventTime,
        state: task.state,
      });
      task.dirty = false;
      task.checkpointed = { ...task.positions };
      task.lastCheckpointAt = Date.now();
      task.lastSaveMs = performance.now() - started;
    }
    task.progressThrough = Math.max(task.progressThrough, handledThrough(task));
    this.commit(task, covered(task.sources, task.positions, handledThrough(task)));
  }

  /**
   * Records that the task has handled everything its upstreams wrote before their progress
   * (every head at or after it, every empty input at its end), so that it can say it handled
   * through that time, which it commits once its outputs are durable. Without it a stage whose
   * own inputs stop short of its upstream's (the scores stage's last feature snapshot is before
   * the engine's last tick) would hold the stages behind it (the analogs stage, which reads the
   * ticks too) short of their ends for good.
   */
  private noteDrained(task: Task<State>): void {
    const before = this.upstream.before;
    if (this.gated.size === 0 || before <= handledThrough(task)) return;
    for (let i = 0; i < task.inputs.length; i++) {
      const head = task.inputs[i].peek();
      if (head) {
        if (head.timestamp < before) return;
        continue;
      }
      const source = task.sources[i];
      const fetched = task.inputs[i].fetched;
      if (this.gated.has(source.topic) ? fetched < (this.upstream.ends.get(source.topic)?.[source.partition] ?? Infinity) : !this.knownAtEnd(source, fetched, this.idleCheckMs)) return;
    }
    task.drainedThrough = before;
  }

  /**
   * Commits a checkpoint's positions, off the processing path: a group busy re-balancing may
   * hold a commit for seconds, and one not made only leaves the group's offsets further
   * behind the checkpoint. One that failed (the broker gone for a while, this member expired
   * meanwhile) is made again at the task's next due checkpoint, also when it is idle.
   */
  private commit(task: Task<State>, covered: CommitOffset[]): void {
    task.uncommitted = covered;
    task.lastCommitAt = Date.now();
    // Checkpoints come faster than a re-balancing group answers commits: one commit per task
    // waits in line, and it sends the latest positions, not one commit per checkpoint.
    if (task.commitQueued) return;
    task.commitQueued = true;
    this.commits = this.commits.then(async () => {
      task.commitQueued = false;
      const offsets = task.uncommitted;
      if (!offsets) return;
      this.busySince.commit = Date.now();
      // The group commits only the partitions this member holds: the rest stay to commit.
      const wholly = this.holdsAll(task);
      try {
        await this.consumer?.commit(offsets);
        if (wholly && task.uncommitted === offsets) task.uncommitted = undefined;
      } catch (err) {
        this.logger.warn({ err, task: task.id }, 'offset commit failed; made again at the next checkpoint');
      } finally {
        this.busySince.commit = undefined;
      }
    });
  }

  /** False once the task failed and was dropped for a new one from its checkpoint. */
  private isCurrent(task: Task<State>): boolean {
    return this.tasks.get(task.id) === task;
  }

  private async task(id: number): Promise<Task<State>> {
    const existing = this.tasks.get(id);
    if (existing) return existing;
    const saved = await this.options.checkpoints.load<State>(this.processor.name, id);
    const usable = saved?.stateVersion === this.processor.stateVersion ? saved : undefined;
    const sources = await this.sourcesOf(id);
    const positions = Object.fromEntries(sources.map((s) => [s.id, usable?.positions[s.id] ?? 0]));
    const maxEventTime = usable?.maxEventTime ?? -Infinity;
    const queues = new Map(sources.map((s) => [s.id, new InputQueue(positions[s.id])]));
    const task: Task<State> = {
      id,
      state: usable?.state ?? this.processor.createState(id),
      sources,
      positions,
      queues,
      inputs: sources.map((s) => queues.get(s.id)!),
      maxEventTime,
      drainedThrough: -Infinity,
      checkpointed: { ...positions },
      progressThrough: -Infinity,
      watermark: maxEventTime - this.processor.allowedLatenessMs,
      dirty: false,
      lastCheckpointAt: Date.now(),
      lastSaveMs: 0,
      backlog: 0,
      // The checkpoint may be ahead of the group's offsets (a commit refused, or the process
      // ended between the save and the commit): offered once more, or the lag stays for good.
      uncommitted: usable ? covered(sources, positions, maxEventTime) : undefined,
      lastCommitAt: 0,
      commitQueued: false,
      idleCheckQueued: false,
    };
    this.tasks.set(id, task);
    return task;
  }

  private async sourcesOf(taskId: number): Promise<Source[]> {
    const sources: Source[] = [];
    for (const topic of this.processor.inputs) {
      if (this.processor.parallelism === 'partition') {
        sources.push({ id: sourceId(topic, taskId), topic, partition: taskId });
        continue;
      }
      const partitions = (await this.options.log.endOffsets(topic)).map((e) => e.partition).sort((a, b) => a - b);
      for (const partition of partitions) sources.push({ id: sourceId(topic, partition), topic, partition });
    }
    return sources;
  }
}

/**
 * The context of one record or watermark. A class rather than a literal with arrow
 * functions: a context is made per record, and its methods then cost no closures.
 */
class RecordContext implements ProcessorContext {
  constructor(
    readonly eventTime: number,
    readonly watermark: number,
    private readonly outputs: OutputRecord[],
    private readonly record: LogRecord | undefined,
    private readonly deadLetter: (record: LogRecord, reason: string) => OutputRecord,
  ) {}

  id(prefix: string, ...parts: (string | number)[]): string {
    return deterministicId(prefix, ...parts);
  }

  emit(output: OutputRecord): void {
    this.outputs.push(output);
  }

  reject(reason: string): void {
    if (!this.record) throw new Error('reject() is only for the record being processed');
    this.outputs.push(this.deadLetter(this.record, reason));
  }
}

/**
 * The input positions a state covers, as the group commits them, each with the event time of
 * the last input handled (Kafka Streams keeps its stream time in the commit metadata alike):
 * a processor downstream reads how far this one has finished from it (readUpstream()).
 */
function covered(sources: Source[], positions: Record<string, number>, maxEventTime: number): CommitOffset[] {
  const metadata = JSON.stringify({ handledThrough: maxEventTime === -Infinity ? null : maxEventTime });
  return sources.map(({ id, topic, partition }) => ({ topic, partition, offset: positions[id], metadata }));
}

/** The event time the task has handled its inputs through: its last input's, or its upstreams' progress once drained. */
function handledThrough(task: { maxEventTime: number; drainedThrough: number }): number {
  return Math.max(task.maxEventTime, task.drainedThrough);
}

/** The event time a commit's metadata says its positions were handled through; -Infinity when it says none. */
function handledThroughIn(metadata: string | null): number {
  try {
    const at = (JSON.parse(metadata ?? 'null') as { handledThrough?: unknown } | null)?.handledThrough;
    return typeof at === 'number' ? at : -Infinity;
  } catch {
    return -Infinity; // committed by something else
  }
}

function isHeld(held: readonly TopicPartition[], { topic, partition }: Source): boolean {
  return held.some((h) => h.topic === topic && h.partition === partition);
}

function sameOffsets(a: readonly number[], b: readonly number[] | undefined): boolean {
  return b !== undefined && a.length === b.length && a.every((offset, i) => offset === b[i]);
}

function sourceId(topic: string, partition: number): string {
  return `${topic}#${partition}`;
}

/** `<prefix>_<24 hex digits of SHA-256 over the parts>`: stable across runs and processes. */
export function deterministicId(prefix: string, ...parts: (string | number)[]): string {
  return `${prefix}_${hash('sha256', parts.join('\u001f'), 'hex').slice(0, 24)}`;
}
