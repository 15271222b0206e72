import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../logging.ts';
import { isRetryable, StoreError } from './errors.ts';
import type { AnalyticalStore } from './port.ts';
import { tableOf, validateRows, type RowOf, type TableRegistry } from './table.ts';

export interface BatchedWriterOptions {
  logger: Logger;
  /** A table's buffer is written once it holds this many rows. */
  maxRows?: number;
  /** Rows wait at most this long before being written. */
  flushIntervalMs?: number;
  retry?: {
    /** Tries per batch, the first included. */
    attempts?: number;
    baseDelayMs?: number;
    maxDelayMs?: number;
  };
}

export interface WriterMetrics {
  rowsWritten: number;
  flushes: number;
  retries: number;
  lastFlushLatencyMs: number;
  bufferedRows: number;
}

/**
 * Buffers rows per table and writes each buffer with one upsert: once it reaches `maxRows`,
 * after `flushIntervalMs`, on flush() and on close(). Batches of one table are written in
 * order, one at a time. Transient store failures (StoreError.retryable) are retried with
 * exponential backoff; any other failure, or running out of tries, stops the writer: the
 * failed rows are not kept, and write(), flush() and close() throw that error from then on,
 * so a consumer never commits offsets past rows that were not stored. The caller then
 * replays from its last checkpoint, which the idempotent upserts make safe.
 *
 * The writer does not own the store: close the store after the writer.
 */
export class BatchedWriter<T extends TableRegistry> {
  private readonly maxRows: number;
  private readonly flushIntervalMs: number;
  private readonly attempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly buffers = new Map<string, object[]>();
  /** Per table, the end of its chain of batches; never rejects. */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private failure: Error | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly counters = { rowsWritten: 0, flushes: 0, retries: 0, lastFlushLatencyMs: 0 };

  constructor(
    private readonly store: AnalyticalStore<T>,
    private readonly options: BatchedWriterOptions,
  ) {
    this.maxRows = options.maxRows ?? 10_000;
    this.flushIntervalMs = options.flushIntervalMs ?? 500;
    this.attempts = options.retry?.attempts ?? 5;
    this.baseDelayMs = options.retry?.baseDelayMs ?? 100;
    this.maxDelayMs = options.retry?.maxDelayMs ?? 5_000;
  }

  /** Buffers rows; they are checked against the table definition now, not when written. */
  write<N extends keyof T & string>(table: N, rows: readonly RowOf<T[N]>[]): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw new StoreError('STORE_CLOSED', 'the batched writer is closed');
    validateRows(tableOf(this.store.tables, table), rows);
    if (rows.length === 0) return;
    let buffer = this.buffers.get(table);
    if (!buffer) this.buffers.set(table, (buffer = []));
    for (const row of rows) buffer.push(row);
    if (buffer.length >= this.maxRows) this.startBatch(table);
    else this.timer ??= setTimeout(() => this.onTimer(), this.flushIntervalMs).unref();
  }

  /** Resolves once every row written before the call is in the store; rejects if any could not be. */
  async flush(): Promise<void> {
    this.clearTimer();
    for (const table of this.buffers.keys()) this.startBatch(table);
    await Promise.all([...this.pending]);
    if (this.failure) throw this.failure;
  }

  /** Writes what is buffered and refuses further writes; every call waits for the same final flush. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= this.flush();
    return this.closing;
  }

  metrics(): WriterMetrics {
    let bufferedRows = 0;
    for (const buffer of this.buffers.values()) bufferedRows += buffer.length;
    return { ...this.counters, bufferedRows };
  }

  private onTimer(): void {
    this.timer = undefined;
    for (const table of this.buffers.keys()) this.startBatch(table);
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Takes the table's whole buffer as one batch, queued behind the table's earlier batches. */
  private startBatch(table: string): void {
    const rows = this.buffers.get(table);
    if (!rows || rows.length === 0) return;
    this.buffers.delete(table);
    const previous = this.tails.get(table) ?? Promise.resolve();
    const tail = previous.then(() => this.writeBatch(table, rows)).catch((err: unknown) => this.fail(err));
    this.tails.set(table, tail);
    this.pending.add(tail);
    void tail.finally(() => this.pending.delete(tail));
  }

  private async writeBatch(table: string, rows: readonly object[]): Promise<void> {
    if (this.failure) return;
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        // Rows were validated by write(); the cast only restores their per-table type.
        await this.store.upsert(table, rows as readonly RowOf<T[string]>[]);
        break;
      } catch (err) {
        if (!isRetryable(err) || attempt >= this.attempts) throw err;
        const delayMs = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
        this.counters.retries++;
        this.options.logger.warn({ err, table, attempt, delayMs: Math.round(delayMs) }, 'store write failed, retrying');
        await sleep(delayMs);
      }
    }
    this.counters.rowsWritten += rows.length;
    this.counters.flushes++;
    this.counters.lastFlushLatencyMs = performance.now() - started;
  }

  private fail(err: unknown): void {
    if (this.failure) return;
    this.failure = err instanceof Error ? err : new Error(String(err));
    this.clearTimer();
    this.options.logger.error({ err }, 'store write failed; the batched writer stopped');
  }
}
