import type { EventLog, LogConsumer, LogRecord } from '../../infra/log/port.ts';
import type { Logger } from '../../infra/logging.ts';
import { readControlEvents } from '../../projections/control-events.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import {
  BacktestRequestSchema,
  BacktestRunEventSchema,
  TERMINAL_RUN_STATUSES,
  type BacktestRequest,
  type BacktestRunEvent,
} from '../../schemas/records.ts';
import { normaliseBacktestSpec } from '../backtest/spec.ts';
import { runBacktest } from '../backtest/run.ts';
import type { HistorySource } from '../history/source.ts';
import { splitEvents } from '../../projections/read-models/backtest-events.ts';
import { appendEventsPart, appendRunEvent } from '../runs/commands.ts';
import type { StoredSpec } from '../runs/stored-spec.ts';

/**
 * Runs the backtests requested on control.backtests and records what becomes of each on
 * research.backtest-runs: `running` (with progress), then `done` with the result, `failed`
 * or `canceled`. Its whole state comes from the log: at start it reads every run event, then
 * consumes the requests from its group's committed offset, which it keeps below the oldest
 * request without a terminal event. So a request queued or running when the process died
 * (kill -9 included) is run again after a restart, and a rerun reads the same history: the
 * run's `as_of` (the end of the data at its first start) is recorded with its first event and
 * passed to the engine as its point in time.
 *
 * The engine runs on this process's event loop and yields between its store queries (one
 * per day of history and per batch of entries, run on DuckDB's or ClickHouse's threads), so
 * in the embedded single process the API keeps answering during a run.
 */

export const GROUP_ID = 'research';
/** How long a run whose outcome could not be recorded waits before it is tried again. */
const RETRY_MS = 5_000;
/** A run records progress when it has moved on by this share of its snapshots. */
const PROGRESS_STEP = 0.1;

export interface BacktestRunnerOptions {
  log: EventLog;
  codec: Codec;
  history: HistorySource;
  logger: Logger;
  /** Runs executed at once by this runner. */
  concurrency?: number;
  /**
   * How many runs a key of the plan may have queued or running at once. The API checks it
   * when it takes a request; the runner checks it again in the log's order, which the
   * requests of every API process share, so two processes that each let one pass cannot take
   * a key past it together. Absent: not checked here.
   */
  concurrentRunsOf?: (plan: BacktestRequest['plan']) => number;
  /** The most bytes of events a part of a result holds (default EVENTS_PART_BYTES). */
  eventsPartBytes?: number;
  now?: () => number;
}

interface Pending {
  request: BacktestRequest;
  offset: number;
}

export class BacktestRunner {
  /** The latest recorded event of each run. */
  private readonly recorded = new Map<string, BacktestRunEvent>();
  /** Requests without a terminal event, by run id, in arrival order. */
  private readonly pending = new Map<string, Pending>();
  private readonly running = new Map<string, AbortController>();
  private readonly active = new Set<Promise<void>>();
  private consumer: LogConsumer | null = null;
  private consuming: Promise<void> | null = null;
  private nextOffset = 0;
  private stopping = false;
  private readonly now: () => number;

  constructor(private readonly options: BacktestRunnerOptions) {
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const { log, codec } = this.options;
    for (const event of await readControlEvents(log, codec, TOPICS.backtestRuns.name, BacktestRunEventSchema)) {
      const known = this.recorded.get(event.runId);
      if (known === undefined || event.seq > known.seq) this.recorded.set(event.runId, event);
    }
    const consumer = log.consumer({ groupId: GROUP_ID, topics: [TOPICS.backtests.name], fromBeginning: true, autoCommit: false, exclusive: { slot: 0 } });
    this.consumer = consumer;
    this.consuming = consumer
      .run(async (batch) => {
        for (const record of batch.records) await this.onRequest(record);
        this.schedule();
        await this.commit();
      })
      .catch((err: unknown) => this.options.logger.error({ err }, 'backtest request consumer failed'));
  }

  /** Stops taking requests and aborts the runs in hand; they stay unfinished in the log and run again at the next start. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer?.stop();
    await this.consuming;
    for (const controller of this.running.values()) controller.abort(new Error('the research role is stopping'));
    await Promise.all([...this.active]);
  }

  private isTerminal(runId: string): boolean {
    const status = this.recorded.get(runId)?.status;
    return status !== undefined && TERMINAL_RUN_STATUSES.includes(status);
  }

  private async onRequest(record: LogRecord): Promise<void> {
    this.nextOffset = record.offset + 1;
    if (record.value === null) return;
    const parsed = BacktestRequestSchema.safeParse(await this.options.codec.decode(record.topic, record.value));
    if (!parsed.success) {
      this.options.logger.warn({ offset: record.offset, issues: parsed.error.issues }, 'invalid backtest request skipped');
      return;
    }
    const request = parsed.data;
    if (this.isTerminal(request.runId)) return;
    if (request.action === 'queue') {
      const limit = this.options.concurrentRunsOf?.(request.plan);
      const unfinished = [...this.pending.values()].filter((p) => p.request.keyId === request.keyId).length;
      if (limit !== undefined && unfinished >= limit && !this.pending.has(request.runId)) {
        const reason = `LIMIT_REACHED: the key had ${unfinished} runs queued or running when this one came, as many as its plan (${request.plan}) allows at once`;
        return this.finishUnstarted(request, 'failed', reason);
      }
      this.pending.set(request.runId, { request, offset: record.offset });
      return;
    }
    const controller = this.running.get(request.runId);
    if (controller !== undefined) controller.abort(new CanceledError());
    else if (this.pending.has(request.runId)) await this.finishUnstarted(request, 'canceled', 'canceled by its owner');
  }

  /** A request canceled, or refused, before it started is recorded so at once. */
  private async finishUnstarted(request: BacktestRequest, status: 'canceled' | 'failed', reason: string): Promise<void> {
    const at = this.now();
    const previous = this.recorded.get(request.runId);
    await this.record({
      runId: request.runId,
      seq: (previous?.seq ?? 0) + 1,
      status,
      attempt: previous?.attempt ?? 1,
      scanned: previous?.scanned ?? 0,
      total: previous?.total ?? 0,
      asOf: previous?.asOf ?? null,
      startedAt: previous?.startedAt ?? at,
      finishedAt: at,
      reason,
      result: null,
      ts: at,
    });
  }

  private async record(event: BacktestRunEvent): Promise<void> {
    await appendRunEvent(this.options.log, this.options.codec, event);
    this.recorded.set(event.runId, event);
    if (TERMINAL_RUN_STATUSES.includes(event.status)) this.pending.delete(event.runId);
  }

  /** The group's offset stays at the oldest unfinished request, so a restart finds it again. */
  private async commit(): Promise<void> {
    const oldest = Math.min(this.nextOffset, ...[...this.pending.values()].map((p) => p.offset));
    await this.consumer?.commit([{ topic: TOPICS.backtests.name, partition: 0, offset: oldest }]).catch((err: unknown) => {
      this.options.logger.warn({ err }, 'backtest request offset not committed');
    });
  }

  private schedule(): void {
    const limit = this.options.concurrency ?? 1;
    for (const { request } of this.pending.values()) {
      if (this.stopping || this.running.size >= limit) return;
      if (this.running.has(request.runId)) continue;
      const controller = new AbortController();
      this.running.set(request.runId, controller);
      let retry = false;
      const job = this.execute(request, controller.signal)
        .catch((err: unknown) => {
          // The log or the store failed before the outcome was recorded: the run is still pending; try it again shortly.
          this.options.logger.error({ err, runId: request.runId }, 'backtest run not recorded; retrying');
          retry = true;
        })
        .finally(() => {
          this.running.delete(request.runId);
          this.active.delete(job);
          if (this.stopping) return;
          if (retry) setTimeout(() => this.schedule(), RETRY_MS).unref();
          else this.schedule();
          void this.commit();
        });
      this.active.add(job);
    }
  }

  private async execute(request: BacktestRequest, signal: AbortSignal): Promise<void> {
    const { history, logger } = this.options;
    const previous = this.recorded.get(request.runId);
    const at = this.now();
    const asOf = previous?.asOf ?? (await history.bounds())?.last ?? null;
    let seq = previous?.seq ?? 0;
    const state = {
      runId: request.runId,
      attempt: (previous?.attempt ?? 0) + 1,
      asOf,
      startedAt: previous?.startedAt ?? at,
    };
    let scanned = 0;
    let total = 0;
    const event = (status: BacktestRunEvent['status'], extra: Partial<BacktestRunEvent> = {}): BacktestRunEvent => {
      const ts = this.now();
      return { ...state, seq: ++seq, status, scanned, total, finishedAt: null, reason: null, result: null, ts, ...extra };
    };
    await this.record(event('running'));
    logger.info({ runId: request.runId, attempt: state.attempt }, 'backtest run started');

    // Progress events go out one at a time, in order, and never hold the engine up.
    let progress = Promise.resolve();
    let lastShare = 0;
    const onProgress = (s: number, t: number): void => {
      scanned = s;
      total = t;
      const share = t === 0 ? 1 : s / t;
      if (share - lastShare < PROGRESS_STEP && share < 1) return;
      lastShare = share;
      const e = event('running');
      progress = progress.then(() => this.record(e)).catch((err: unknown) => logger.warn({ err }, 'backtest progress not recorded'));
    };
    try {
      const spec = normaliseBacktestSpec(JSON.parse(request.spec) as StoredSpec);
      const result = await runBacktest(spec, history, { signal, onProgress, now: asOf ?? undefined });
      await progress;
      const finishedAt = this.now();
      try {
        // The events first, in parts under the log's record limit; then done, naming how many.
        const { rest, parts } = splitEvents(result, this.options.eventsPartBytes);
        for (const [part, events] of parts.entries()) {
          await appendEventsPart(this.options.log, this.options.codec, { runId: request.runId, part, parts: parts.length, events, ts: finishedAt });
        }
        await this.record(event('done', { scanned: total, finishedAt, result: rest }));
      } catch (err) {
        // E.g. a result beyond the log's record size limit: say so rather than run it again and again.
        await this.record(event('failed', { finishedAt, reason: `the result could not be recorded: ${(err as Error).message}`.slice(0, 500) }));
        return;
      }
      logger.info({ runId: request.runId, n: result.n }, 'backtest run done');
    } catch (err) {
      await progress;
      // Stopping: nothing is recorded, so it runs again at the next start.
      if (signal.aborted && !(signal.reason instanceof CanceledError)) return;
      const canceled = signal.reason instanceof CanceledError;
      const reason = canceled ? 'canceled by its owner' : (err as Error).message.slice(0, 500) || 'the run failed';
      await this.record(event(canceled ? 'canceled' : 'failed', { finishedAt: this.now(), reason }));
      if (!canceled) logger.warn({ err, runId: request.runId }, 'backtest run failed');
    }
  }
}

class CanceledError extends Error {
  constructor() {
    super('canceled by its owner');
  }
}
