import { defineTable, type RowOf } from '../../infra/store/table.ts';

/**
 * Backtest requests as of their latest control.backtests event (schemas/records/research.ts):
 * who queued what, and whether its owner asked to cancel it. `spec` is the validated request as JSON.
 */
export const backtestRequests = defineTable({
  name: 'backtest_requests',
  columns: {
    run_id: 'string',
    version: 'int64',
    ts: 'int64',
    key_id: 'string',
    team_id: 'string?',
    dataset: 'string',
    plan: 'string',
    name: 'string?',
    spec: 'json',
    created_at: 'int64',
    cancel_requested_at: 'int64?',
  },
  key: ['run_id'],
  version: 'version',
});
export type BacktestRequestRow = RowOf<typeof backtestRequests>;

/**
 * What the research role recorded of each run (research.backtest-runs), latest event wins. A
 * request without a row here is still queued. `result` is the engine's result JSON once done.
 */
export const backtestRuns = defineTable({
  name: 'backtest_runs',
  columns: {
    run_id: 'string',
    seq: 'int64',
    ts: 'int64',
    status: 'string',
    attempt: 'int64',
    scanned: 'int64',
    total: 'int64',
    as_of: 'int64?',
    started_at: 'int64',
    finished_at: 'int64?',
    reason: 'string?',
    result: 'json?',
  },
  key: ['run_id'],
  version: 'seq',
});
export type BacktestRunRow = RowOf<typeof backtestRuns>;

/**
 * The events of each done run (research.backtest-events), in parts: the run's result in
 * backtest_runs holds the rest and names how many parts there are (`events_parts`).
 */
export const backtestEvents = defineTable({
  name: 'backtest_events',
  columns: {
    run_id: 'string',
    part: 'int64',
    parts: 'int64',
    ts: 'int64',
    events: 'json',
  },
  key: ['run_id', 'part'],
  version: 'ts',
});
export type BacktestEventsRow = RowOf<typeof backtestEvents>;

/** The latest result of each event study (research.event-studies), newest hour boundary wins. */
export const eventStudies = defineTable({
  name: 'event_studies',
  columns: {
    slug: 'string',
    as_of: 'int64',
    ts: 'int64',
    result: 'json',
  },
  key: ['slug'],
  version: 'as_of',
});
export type EventStudyRow = RowOf<typeof eventStudies>;
