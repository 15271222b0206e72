import { setTimeout as delay } from 'node:timers/promises';
import { EventLoopTurns } from '../../infra/event-loop/turns.ts';
import type { Config } from '../../infra/config.ts';
import type { Batch, BatchContext, EventLog, LogConsumer, LogRecord } from '../../infra/log/port.ts';
import type { Logger } from '../../infra/logging.ts';
import { BatchedWriter } from '../../infra/store/batched-writer.ts';
import { StoreError } from '../../infra/store/errors.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { tableOf, validateRows } from '../../infra/store/table.ts';
import { catalogueTopic, TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { RECORD_TYPES, type DeadLetter } from '../../schemas/records.ts';
import type { ProjectionTables } from '../tables.ts';
import type { AnyProjection, ProjectedRow, TableName } from './projection.ts';

export interface ProjectionRunnerOptions {
  projection: AnyProjection;
  log: EventLog;
  codec: Codec;
  store: AnalyticalStore<ProjectionTables>;
  logger: Logger;
  /** Consumer group; `projection.<name>` unless given (replay uses groups of its own). */
  groupId?: string;
  /**
   * Records that fail decoding, validation or mapping: `produce` appends them to
   * ops.dead-letters (live); `log` only logs and counts them, for replays, which must not
   * write the log (the live run already dead-lettered them).
   */
  deadLetters?: 'produce' | 'log';
  /**
   * `per-batch` (live): a batch's handler returns, and the consumer commits its offsets, only
   * once its rows are stored. `background` (replay, whose consumer groups are thrown away):
   * rows are written while the next batches are decoded, and offsets commit ahead of the
   * store; only caughtUp() and stop() tell what is stored.
   */
  flush?: 'per-batch' | 'background';
  maxBatchRecords?: number;
  /**
   * A small batch (live trickle) waits until this long after the previous flush before
   * flushing, so a remote store gets few large inserts; backlog batches flush at once.
   */
  minFlushIntervalMs?: number;
}

export interface ProjectionStats {
  /** Records handled: projected, failed or tombstones. */
  records: number;
  /** Rows flushed to the store. */
  rowsWritten: number;
  /** Records that failed decoding, validation or mapping. */
  failed: number;
  /** Null values (compaction tombstones): they carry no row. */
  tombstones: number;
  /** Records handled per second since start(). */
  recordsPerSecond: number;
}

const DEFAULT_MAX_BATCH_RECORDS = 10_000;
/** Below this many records a batch is live trickle, not backlog, and is paced. */
const SMALL_BATCH_RECORDS = 1_000;
/** In background mode, how many unstored rows a handler may leave before it waits for the store. */
const BACKGROUND_ROWS_IN_FLIGHT = 50_000;

/** The consumer group of a projection's live runner: its committed offsets say what is stored. */
export function liveGroupId(projection: AnyProjection): string {
  return `projection.${projection.name}`;
}

/**
 * Runs one projection over the log: consumes its topics in the consumer group
 * `projection.<name>`, decodes and validates each value against its topic's record type,
 * maps it to rows and writes them through a BatchedWriter. A batch's handler returns only
 * once its rows are in the store and its failures are in the dead-letter topic, and the
 * consumer commits the batch's offsets only after the handler returned: at-least-once, with
 * repeats made harmless by upserts by natural key and version. (Replay's `background` mode
 * trades that for overlapping decoding with writing; see the option.)
 */
export class ProjectionRunner {
  readonly groupId: string;
  private readonly projection: AnyProjection;
  private readonly logger: Logger;
  private readonly maxBatchRecords: number;
  private readonly tables: ReadonlySet<string>;
  private writer: BatchedWriter<ProjectionTables>;
  private consumer: LogConsumer | undefined;
  private running: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  /** Next offset per `<topic>#<partition>`: `handled` once mapped, `stored` once its rows are in the store. */
  private readonly handled = new Map<string, number>();
  private readonly stored = new Map<string, number>();
  /** Rows handed to the writer and not yet known to be stored (background mode). */
  private unstoredRows = 0;
  /** Background mode: the store failure that makes caughtUp() reject. */
  private failure: Error | undefined;
  private lastFlushAt = -Infinity;
  private startedAt = 0;
  private readonly counters = { records: 0, rowsWritten: 0, failed: 0, tombstones: 0 };

  constructor(private readonly options: ProjectionRunnerOptions) {
    this.projection = options.projection;
    this.groupId = options.groupId ?? liveGroupId(options.projection);
    this.logger = options.logger.child({ projection: options.projection.name });
    this.maxBatchRecords = options.maxBatchRecords ?? DEFAULT_MAX_BATCH_RECORDS;
    this.tables = new Set(options.projection.tables);
    for (const name of this.tables) tableOf(options.store.tables, name);
    this.writer = this.newWriter();
  }

  /** Starts consuming; resolves once stopped, rejects if the consumer fails for good. */
  start(): Promise<void> {
    this.startedAt = performance.now();
    this.consumer = this.options.log.consumer({
      groupId: this.groupId,
      topics: [...this.projection.topics],
      fromBeginning: true,
      maxBatchRecords: this.maxBatchRecords,
    });
    this.running = this.consumer.run((batch, ctx) => this.handle(batch, ctx));
    return this.running;
  }

  /** Finishes the batch in hand (its rows stored, its offsets committed) and stops. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.consumer?.stop();
    await this.running?.catch(() => undefined);
    await this.writer.close().catch((err: unknown) => this.logger.warn({ err }, 'closing the writer failed'));
  }

  /**
   * True when the store holds every record of the projection's topics up to their current
   * ends. In background mode it writes what is buffered first, and rejects if the store failed.
   */
  async caughtUp(): Promise<boolean> {
    if (this.failure) throw this.failure;
    const background = this.options.flush === 'background';
    const { log } = this.options;
    let stored = true;
    for (const topic of this.projection.topics) {
      const [ends, starts, committed] = await Promise.all([
        log.endOffsets(topic),
        log.startOffsets(topic),
        // In background mode commits run ahead of the store, so they say nothing.
        background ? [] : log.committedOffsets(this.groupId, topic),
      ]);
      for (const { partition, offset: end } of ends) {
        const id = `${topic}#${partition}`;
        const floor = Math.max(
          committed.find((c) => c.partition === partition)?.offset ?? 0,
          starts.find((s) => s.partition === partition)?.offset ?? 0,
        );
        if (Math.max(this.handled.get(id) ?? 0, floor) < end) return false;
        if (Math.max(this.stored.get(id) ?? 0, floor) < end) stored = false;
      }
    }
    if (!stored) await this.store();
    return true;
  }

  stats(): ProjectionStats {
    const seconds = this.startedAt === 0 ? 0 : (performance.now() - this.startedAt) / 1000;
    return { ...this.counters, recordsPerSecond: seconds > 0 ? this.counters.records / seconds : 0 };
  }

  private newWriter(): BatchedWriter<ProjectionTables> {
    // Flushed by the runner; the writer's own timer is only a backstop.
    return new BatchedWriter(this.options.store, { logger: this.logger, maxRows: this.maxBatchRecords, flushIntervalMs: 5_000 });
  }

  private async handle(batch: Batch, ctx: BatchContext): Promise<void> {
    const last = batch.records.at(-1);
    if (!last) return;
    try {
      const counts = { rows: 0, failed: 0, tombstones: 0 };
      const letters: DeadLetter[] = [];
      // Reads of the store asked by other threads (the API) are answered in the loop's turns.
      const turns = new EventLoopTurns();
      const newest = this.projection.newestOf ? new Map<string, Newest>() : undefined;
      const project = (value: unknown, record: LogRecord) => {
        const outcome = this.project(value, record);
        if (typeof outcome === 'number') counts.rows += outcome;
        else letters.push(this.deadLetter(record, outcome.reason));
      };
      for (const record of batch.records) {
        const turn = turns.due();
        if (turn) await turn;
        const outcome = await this.validated(record);
        if (outcome === null) counts.tombstones++;
        else if ('reason' in outcome) letters.push(this.deadLetter(record, outcome.reason));
        else if (newest) this.keepNewest(newest, outcome.value, record);
        else project(outcome.value, record);
      }
      for (const { value, record } of newest?.values() ?? []) project(value, record);
      if (letters.length > 0) await this.reject(letters);
      counts.failed = letters.length;
      const id = `${batch.topic}#${batch.partition}`;
      if (this.options.flush === 'background') {
        this.count(batch.records.length, counts);
        this.handled.set(id, last.offset + 1);
        this.unstoredRows += counts.rows;
        if (this.unstoredRows >= BACKGROUND_ROWS_IN_FLIGHT) await this.store();
        return;
      }
      await this.pace(batch.records.length, ctx);
      await this.writer.flush();
      this.lastFlushAt = performance.now();
      this.count(batch.records.length, counts);
      this.counters.rowsWritten += counts.rows;
      this.handled.set(id, last.offset + 1);
      this.stored.set(id, last.offset + 1);
    } catch (err) {
      if (this.options.flush === 'background') {
        // Final: the rows of batches already committed went with the failed writer.
        this.failure ??= err instanceof Error ? err : new Error(String(err));
        throw err;
      }
      // A failed writer refuses everything from then on; the batch comes again to a fresh one.
      const failed = this.writer;
      this.writer = this.newWriter();
      await failed.close().catch(() => undefined);
      throw err;
    }
  }

  private count(records: number, counts: { failed: number; tombstones: number }): void {
    this.counters.records += records;
    this.counters.failed += counts.failed;
    this.counters.tombstones += counts.tombstones;
  }

  /** Background mode: waits until everything handled so far is stored. */
  private async store(): Promise<void> {
    const handled = new Map(this.handled);
    const rows = this.unstoredRows;
    this.unstoredRows = 0;
    try {
      await this.writer.flush();
    } catch (err) {
      this.failure ??= err instanceof Error ? err : new Error(String(err));
      throw err;
    }
    this.counters.rowsWritten += rows;
    for (const [id, offset] of handled) this.stored.set(id, Math.max(offset, this.stored.get(id) ?? 0));
  }

  /** The record's value decoded and validated against its topic's type, null for a tombstone, or why it cannot be. */
  private async validated(record: LogRecord): Promise<{ value: unknown } | { reason: string } | null> {
    if (record.value === null) return null;
    let decoded: unknown;
    try {
      decoded = await this.options.codec.decode(record.topic, record.value);
    } catch (err) {
      return { reason: `decoding failed: ${(err as Error).message}` };
    }
    const entry = catalogueTopic(record.topic);
    if (!entry) return { reason: `topic ${record.topic} is not in the catalogue` };
    const validated = RECORD_TYPES[entry.valueType].safeParse(decoded);
    if (!validated.success) {
      const issues = validated.error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`);
      return { reason: `validation failed: ${issues.join('; ')}` };
    }
    return { value: validated.data };
  }

  /** Keeps the value if it is the newest of its key so far: the highest version, the later on a tie, as the store keeps rows. */
  private keepNewest(newest: Map<string, Newest>, value: unknown, record: LogRecord): void {
    // The value was validated against the topic's record type, which newestOf declares.
    const { key, version } = this.projection.newestOf!(value as never);
    const kept = newest.get(key);
    if (!kept || version >= kept.version) newest.set(key, { value, record, version });
  }

  /** Buffers the rows of a validated value and returns how many, or why it cannot be projected. */
  private project(value: unknown, record: LogRecord): number | { reason: string } {
    let rows: ProjectedRow[];
    try {
      // The value was validated against the topic's record type, which toRows declares.
      rows = this.projection.toRows(value as never, record);
      for (const { table, row } of rows) {
        if (!this.tables.has(table)) throw new Error(`a row for table ${table}, which the projection does not declare`);
        validateRows(tableOf(this.options.store.tables, table), [row]);
      }
    } catch (err) {
      const why = err instanceof StoreError ? `row refused: ${err.message}` : `mapping failed: ${(err as Error).message}`;
      return { reason: why };
    }
    for (const { table, row } of rows) writeRow(this.writer, table, row);
    return rows.length;
  }

  private deadLetter(record: LogRecord, reason: string): DeadLetter {
    return {
      source: record.topic,
      partition: record.partition,
      offset: record.offset,
      line: null,
      stage: `projection.${this.projection.name}`,
      reason,
      key: record.key,
      payload: record.value,
      ts: record.timestamp,
    };
  }

  private async reject(letters: DeadLetter[]): Promise<void> {
    const topic = TOPICS.deadLetters.name;
    const produce: DeadLetter[] = [];
    for (const l of letters) {
      const fields = { topic: l.source, partition: l.partition, offset: l.offset, reason: l.reason };
      // A refused dead letter would come back as a new dead letter, refused again, forever.
      if (this.options.deadLetters !== 'log' && l.source !== topic) {
        produce.push(l);
        this.logger.warn(fields, 'dead-lettered');
      } else {
        this.logger.error(fields, 'record cannot be projected (not dead-lettered again)');
      }
    }
    if (produce.length === 0) return;
    const { codec, log } = this.options;
    const records = await Promise.all(
      produce.map(async (l) => ({ key: l.source, value: await codec.encode(topic, l), timestamp: l.ts })),
    );
    await log.append(topic, records);
  }

  private async pace(records: number, ctx: BatchContext): Promise<void> {
    const wait = this.lastFlushAt + (this.options.minFlushIntervalMs ?? 0) - performance.now();
    if (records >= SMALL_BATCH_RECORDS || wait <= 0 || ctx.isStopping()) return;
    await delay(wait, undefined, { signal: this.stopping.signal }).catch(() => undefined);
  }
}

/** A batch's newest validated value of one key (ProjectionRunner.keepNewest). */
interface Newest {
  value: unknown;
  record: LogRecord;
  version: number;
}

/** Writes one row of a projected-row union; the writer validates it against the table again. */
function writeRow(writer: BatchedWriter<ProjectionTables>, table: TableName, row: ProjectedRow['row']): void {
  (writer.write as (table: string, rows: readonly object[]) => void).call(writer, table, [row]);
}

export interface ProjectionSet {
  readonly runners: readonly ProjectionRunner[];
  /** Rejects with the first runner that fails for good; never resolves otherwise. */
  readonly failed: Promise<never>;
  caughtUp(): Promise<boolean>;
  stop(): Promise<void>;
}

/** Starts a runner per projection over one store. */
export function startProjections(
  projections: readonly AnyProjection[],
  options: Omit<ProjectionRunnerOptions, 'projection'> & { groupIdOf?: (projection: AnyProjection) => string },
): ProjectionSet {
  const { groupIdOf, ...shared } = options;
  const runners = projections.map(
    (projection) => new ProjectionRunner({ ...shared, projection, groupId: groupIdOf?.(projection) }),
  );
  const failed = new Promise<never>((_, reject) => {
    for (const runner of runners) {
      runner.start().catch((err: unknown) => {
        options.logger.fatal({ err, group: runner.groupId }, 'projection stopped');
        reject(err);
      });
    }
  });
  // Callers that never race `failed` still get the failure logged above.
  failed.catch(() => undefined);
  return {
    runners,
    failed,
    caughtUp: async () => (await Promise.all(runners.map((r) => r.caughtUp()))).every(Boolean),
    stop: async () => {
      await Promise.all(runners.map((r) => r.stop()));
    },
  };
}

/** The live projections role: every registered projection in its `projection.<name>` group. */
export function startLiveProjections(options: {
  config: Config;
  projections: readonly AnyProjection[];
  log: EventLog;
  codec: Codec;
  store: AnalyticalStore<ProjectionTables>;
  logger: Logger;
}): ProjectionSet {
  const { config, projections, ...rest } = options;
  return startProjections(projections, {
    ...rest,
    deadLetters: 'produce',
    // DESIGN.md §6: ClickHouse wants few large inserts; DuckDB in-process takes small ones cheaply.
    minFlushIntervalMs: config.TQA_STORE === 'clickhouse' ? 500 : 0,
  });
}
