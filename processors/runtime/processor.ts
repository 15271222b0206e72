import type { TableSource } from './state/tables.ts';

/**
 * The contract between a pure processor and the runtime that drives it (DESIGN.md §3).
 *
 * A processor never does IO and never reads the wall clock. The runtime hands it one input
 * record at a time, in a deterministic order, with a context that gives event time, the
 * task's watermark, deterministic ids and a way to emit output records. Everything the
 * processor remembers lives in its state, which the runtime checkpoints together with the
 * input offsets it covers.
 */

export interface InputRecord<V = unknown> {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  /** Event time in epoch milliseconds. */
  timestamp: number;
  /** The decoded and validated value (the topic's record type). */
  value: V;
}

export interface OutputRecord {
  topic: string;
  key: string | null;
  /** A value of the topic's record type; encoded by the runtime. */
  value: unknown;
  /** Event time of the output, epoch milliseconds. */
  timestamp: number;
}

export interface ProcessorContext {
  /** Event time of the record (or watermark) being handled. */
  readonly eventTime: number;
  /**
   * The task's watermark: the largest event time handled so far minus the processor's
   * allowed lateness. Records older than it may still arrive; they are late.
   */
  readonly watermark: number;
  /** A deterministic id `<prefix>_<hash of parts>`: the same inputs give the same id on replay. */
  id(prefix: string, ...parts: (string | number)[]): string;
  emit(output: OutputRecord): void;
  /**
   * Refuses the record being processed: it goes to the dead-letter topic with this reason,
   * while outputs emitted so far are kept. The processor must leave its state as it was.
   */
  reject(reason: string): void;
}

export interface Processor<State> {
  /** Also the consumer group id and the checkpoint name. */
  readonly name: string;
  /** Bump when the state layout changes: older checkpoints are then ignored and state is rebuilt by replay. */
  readonly stateVersion: number;
  /** Input topics. */
  readonly inputs: readonly string[];
  /**
   * `partition`: partition p of every input is one task with its own state; the inputs must
   * be co-partitioned (same key, same partition count). `single`: one task reads every
   * partition of every input, merged in event-time order, for processors that need a global
   * view (symbol resolution, narratives, cohorts).
   */
  readonly parallelism: 'partition' | 'single';
  readonly outputs: readonly string[];
  /**
   * The processors that write some of this one's inputs (those among their outputs): a
   * point-in-time join by watermark. A task handles a record at time t only once every
   * upstream's committed positions cover an input at t or later, and it has read their
   * outputs written up to then. Those timed before t are then all there, provided an upstream
   * never emits an output timed before the input it handled last (the quant engine and its
   * stages do not); some timed at t may come later, so the result must not depend on the
   * order of records within one event time. An upstream that itself waits for another
   * (the scores stage for the engine) holds its own outputs back just as far.
   */
  readonly upstreams?: readonly Processor<unknown>[];
  /** How far behind the largest seen event time the watermark trails. */
  readonly allowedLatenessMs: number;
  /**
   * True when the whole state is kept in the tables `createState` gets (state/tables.ts):
   * then a task's state may live in a store on disk that checkpoints only the keys changed,
   * and anything else the state holds must be derived from those tables.
   */
  readonly keyedState?: boolean;
  /** A new task's state; a keyed one takes its tables from `tables` (Maps when none is given). */
  createState(partition: number, tables?: TableSource): State;
  process(state: State, record: InputRecord, ctx: ProcessorContext): void;
  /** Called when the task's watermark advances, for event-time timers (windows closing, outcomes resolving). */
  onWatermark?(state: State, watermark: number, ctx: ProcessorContext): void;
}
