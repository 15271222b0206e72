import { apiKeysProjection, teamsProjection } from './api-keys.ts';
import { authorMetricsProjection } from './author-metrics.ts';
import { backtestEventsProjection, backtestRequestsProjection, backtestRunsProjection, eventStudiesProjection } from './backtest-runs.ts';
import { cohortEventsProjection } from './cohort-events.ts';
import { cohortsProjection } from './cohorts.ts';
import { deadLettersProjection } from './dead-letters.ts';
import { latestSnapshotsProjection, snapshotHistoryProjection } from './latest-snapshots.ts';
import { mentionsProjection } from './mentions.ts';
import { narrativesProjection } from './narratives.ts';
import { outcomesProjection } from './outcomes.ts';
import type { AnyProjection } from './runtime/projection.ts';
import { signalsProjection } from './signals.ts';
import { tokensProjection } from './tokens.ts';
import { webhookDeliveriesProjection, webhooksProjection } from './webhooks.ts';

/** Every projection the service runs; each gets its own runner and consumer group. */
export const PROJECTIONS: readonly AnyProjection[] = [
  tokensProjection,
  mentionsProjection,
  deadLettersProjection,
  latestSnapshotsProjection,
  snapshotHistoryProjection,
  signalsProjection,
  authorMetricsProjection,
  cohortsProjection,
  cohortEventsProjection,
  narrativesProjection,
  outcomesProjection,
  apiKeysProjection,
  teamsProjection,
  webhooksProjection,
  webhookDeliveriesProjection,
  backtestRequestsProjection,
  backtestRunsProjection,
  backtestEventsProjection,
  eventStudiesProjection,
];
