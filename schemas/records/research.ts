import { z } from 'zod';
import { PLAN_NAMES } from './control-keys.ts';
import { eventTime, slug } from './primitives.ts';

/**
 * Research records. A backtest is requested on control.backtests (queued, then perhaps a
 * cancel); the research role records what became of it on research.backtest-runs; event-study
 * results, refreshed hourly in event time, go to research.event-studies. Each record carries
 * the whole state of its object at that version (a done run's events, which can be many, in
 * parts on research.backtest-events), so a projection is a function of one record
 * and a replay rebuilds every run and every study (DESIGN.md §3, rule 4). Field names match
 * schemas/avro/{backtest-request,backtest-run,event-study}/v1.avsc one to one.
 */

export const BACKTEST_RUN_ID = /^btr_[0-9a-f]{24}$/;
export const BACKTEST_REQUEST_ACTIONS = ['queue', 'cancel'] as const;
export const BACKTEST_RUN_STATUSES = ['running', 'done', 'failed', 'canceled'] as const;
export type BacktestRunStatus = (typeof BACKTEST_RUN_STATUSES)[number];
/** Statuses after which nothing more happens to a run. */
export const TERMINAL_RUN_STATUSES: readonly BacktestRunStatus[] = ['done', 'failed', 'canceled'];

export const BacktestRequestSchema = z.strictObject({
  runId: z.string().regex(BACKTEST_RUN_ID, 'must be btr_<hex>'),
  action: z.enum(BACKTEST_REQUEST_ACTIONS),
  /** 1 for the request, 2 for its cancel: the projection keeps the highest. */
  version: z.number().int().min(1),
  keyId: z.string().min(1),
  teamId: z.string().min(1).nullable(),
  dataset: z.string().min(1),
  /** The key's plan when it was queued. */
  plan: z.enum(PLAN_NAMES),
  name: z.string().max(80).nullable(),
  /** The validated request with its defaults (research/backtest/spec.ts BacktestSpec), as JSON. */
  spec: z.string().min(2),
  createdAt: eventTime,
  /** Set on `cancel`: when the owner asked to stop it. */
  cancelRequestedAt: eventTime.nullable(),
  ts: eventTime,
});
export type BacktestRequest = z.infer<typeof BacktestRequestSchema>;

export const BacktestRunEventSchema = z.strictObject({
  runId: z.string().regex(BACKTEST_RUN_ID, 'must be btr_<hex>'),
  /** Counts the run's events from 1: the projection keeps the highest. */
  seq: z.number().int().min(1),
  status: z.enum(BACKTEST_RUN_STATUSES),
  /** How many times the runner started it: more than 1 after a restart found it unfinished. */
  attempt: z.number().int().min(1),
  scanned: z.number().int().min(0),
  total: z.number().int().min(0),
  /** The end of the history the run reads (its point in time), fixed at its first start so a rerun reads the same. */
  asOf: eventTime.nullable(),
  startedAt: eventTime,
  finishedAt: eventTime.nullable(),
  /** Why it failed or was canceled. */
  reason: z.string().min(1).max(500).nullable(),
  /** The engine's result (snake_case JSON) once done. */
  result: z.string().min(2).nullable(),
  ts: eventTime,
});
export type BacktestRunEvent = z.infer<typeof BacktestRunEventSchema>;

/** A part of a done run's events (the `done` event's result holds the rest and names how many parts there are). */
export const BacktestEventsPartSchema = z.strictObject({
  runId: z.string().regex(BACKTEST_RUN_ID, 'must be btr_<hex>'),
  part: z.number().int().min(0),
  parts: z.number().int().min(1),
  /** The part's events, a JSON array (snake_case, as in the result). */
  events: z.string().min(2),
  ts: eventTime,
});
export type BacktestEventsPart = z.infer<typeof BacktestEventsPartSchema>;

export const EventStudyRecordSchema = z.strictObject({
  slug,
  /** The hour boundary of event time the study was computed as of. */
  asOf: eventTime,
  /** The engine's result (snake_case JSON). */
  result: z.string().min(2),
  ts: eventTime,
});
export type EventStudyRecord = z.infer<typeof EventStudyRecordSchema>;
