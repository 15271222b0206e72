import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';

/** Backtest requests by run id; the cancel carries the whole request, so the newest version is the row. */
export const backtestRequestsProjection = defineProjection({
  name: 'backtest-requests',
  topics: [TOPICS.backtests.name],
  tables: ['backtest_requests'],
  toRows: (e) => [
    {
      table: 'backtest_requests',
      row: {
        run_id: e.runId,
        version: e.version,
        ts: e.ts,
        key_id: e.keyId,
        team_id: e.teamId,
        dataset: e.dataset,
        plan: e.plan,
        name: e.name,
        spec: e.spec,
        created_at: e.createdAt,
        cancel_requested_at: e.cancelRequestedAt,
      },
    },
  ],
});

/** Run states by run id; each event carries the whole state, the highest seq is the row. */
export const backtestRunsProjection = defineProjection({
  name: 'backtest-runs',
  topics: [TOPICS.backtestRuns.name],
  tables: ['backtest_runs'],
  toRows: (e) => [
    {
      table: 'backtest_runs',
      row: {
        run_id: e.runId,
        seq: e.seq,
        ts: e.ts,
        status: e.status,
        attempt: e.attempt,
        scanned: e.scanned,
        total: e.total,
        as_of: e.asOf,
        started_at: e.startedAt,
        finished_at: e.finishedAt,
        reason: e.reason,
        result: e.result,
      },
    },
  ],
});

/** A done run's events, part by part. */
export const backtestEventsProjection = defineProjection({
  name: 'backtest-events',
  topics: [TOPICS.backtestEvents.name],
  tables: ['backtest_events'],
  toRows: (e) => [{ table: 'backtest_events', row: { run_id: e.runId, part: e.part, parts: e.parts, ts: e.ts, events: e.events } }],
});

/** Each event study's latest result. */
export const eventStudiesProjection = defineProjection({
  name: 'event-studies',
  topics: [TOPICS.eventStudies.name],
  tables: ['event_studies'],
  toRows: (e) => [{ table: 'event_studies', row: { slug: e.slug, as_of: e.asOf, ts: e.ts, result: e.result } }],
});
