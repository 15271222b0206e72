import { ApiKeyEventSchema, TeamEventSchema } from './records/control-keys.ts';
import { WebhookEventSchema } from './records/control-webhooks.ts';
import { PublicEventSchema } from './records/public-events.ts';
import { StreamPresenceSchema } from './records/stream-presence.ts';
import { WebhookDeliverySchema } from './records/webhook-deliveries.ts';
import { BacktestEventsPartSchema, BacktestRequestSchema, BacktestRunEventSchema, EventStudyRecordSchema } from './records/research.ts';
import { DeadLetterSchema, MarketTickSchema, MentionSchema, PostSchema, TokenMetaSchema } from './records/ingest.ts';
import { AnalogInputsRecordSchema, FeatureSnapshotSchema, OutcomeSchema, OutcomeSubjectRecordSchema, ScoreInputsRecordSchema, UnresolvedRefSchema } from './records/quant-market.ts';
import {
  AuthorCallSchema,
  AuthorMetricsSchema,
  CohortCommandSchema,
  CohortVersionSchema,
  ConvergenceEventSchema,
  NarrativeBucketSchema,
} from './records/quant-social.ts';
import { QuantSnapshotSchema } from './records/quant-scores.ts';
import { SignalSchema } from './records/quant-signals.ts';
import type { z } from 'zod';

/** Every record type of the log; the definitions live in schemas/records/. */
export * from './records/primitives.ts';
export * from './records/ingest.ts';
export * from './records/quant-market.ts';
export * from './records/quant-social.ts';
export * from './records/quant-scores.ts';
export * from './records/quant-signals.ts';
export * from './records/control-keys.ts';
export * from './records/public-events.ts';
export * from './records/stream-presence.ts';
export * from './records/control-webhooks.ts';
export * from './records/webhook-deliveries.ts';
export * from './records/research.ts';

/** Each record type: its Avro schema folder under schemas/avro and its validator. */
export const RECORD_TYPES = {
  post: PostSchema,
  'market-tick': MarketTickSchema,
  'token-meta': TokenMetaSchema,
  mention: MentionSchema,
  'unresolved-ref': UnresolvedRefSchema,
  'feature-snapshot': FeatureSnapshotSchema,
  'outcome-subject': OutcomeSubjectRecordSchema,
  'analog-inputs': AnalogInputsRecordSchema,
  'score-inputs': ScoreInputsRecordSchema,
  outcome: OutcomeSchema,
  'author-call': AuthorCallSchema,
  'author-metrics': AuthorMetricsSchema,
  'cohort-command': CohortCommandSchema,
  'cohort-version': CohortVersionSchema,
  'convergence-event': ConvergenceEventSchema,
  'narrative-bucket': NarrativeBucketSchema,
  'quant-snapshot': QuantSnapshotSchema,
  signal: SignalSchema,
  'dead-letter': DeadLetterSchema,
  'api-key-event': ApiKeyEventSchema,
  'team-event': TeamEventSchema,
  'public-event': PublicEventSchema,
  'webhook-event': WebhookEventSchema,
  'webhook-delivery': WebhookDeliverySchema,
  'stream-presence': StreamPresenceSchema,
  'backtest-request': BacktestRequestSchema,
  'backtest-run': BacktestRunEventSchema,
  'backtest-events': BacktestEventsPartSchema,
  'event-study': EventStudyRecordSchema,
} as const;

export type RecordTypeName = keyof typeof RECORD_TYPES;
export type RecordOf<T extends RecordTypeName> = z.infer<(typeof RECORD_TYPES)[T]>;
