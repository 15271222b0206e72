import { z } from 'zod';
import { eventTime, isNullableFinite, nullableNumber, snapshotHeader, stringMap, tokenId, usd } from './primitives.ts';

/**
 * Record types the quant engine's market-side modules derive: references no token matched
 * (mentions), point-in-time feature snapshots (features), the subjects whose outcomes are
 * measured and forward outcomes (outcomes), and what the analog vector of a tracked snapshot
 * is made of (analogs), and what scoring a snapshot joins from the social side (scores). Avro
 * schemas: schemas/avro/unresolved-ref, feature-snapshot, outcome-subject, outcome,
 * analog-inputs and score-inputs.
 */

export const UNRESOLVED_REASONS = ['invalid', 'unknown_symbol', 'unknown_id', 'unknown_address'] as const;
export type UnresolvedReason = (typeof UNRESOLVED_REASONS)[number];

export const UnresolvedRefSchema = z.strictObject({
  postId: z.string().min(1),
  ref: z.string().min(1),
  reason: z.enum(UNRESOLVED_REASONS),
  ts: eventTime,
});
export type UnresolvedRef = z.infer<typeof UnresolvedRefSchema>;

export const FeatureSnapshotSchema = z.strictObject({
  ...snapshotHeader,
  featureVersion: z.string().regex(/^features@\d+$/),
  features: stringMap(nullableNumber, isNullableFinite),
  priceUsd: usd.nullable(),
  marketLastAt: eventTime.nullable(),
  sourceLastEventAt: eventTime.nullable(),
});
export type FeatureSnapshot = z.infer<typeof FeatureSnapshotSchema>;

export const OUTCOME_HORIZONS = ['15m', '1h', '6h', '24h', '3d', '7d'] as const;

export const OutcomeSchema = z.strictObject({
  outcomeId: z.string().regex(/^out_[0-9a-f]+$/),
  subjectKind: z.enum(['snapshot', 'call']),
  subjectId: z.string().min(1),
  tokenId,
  subjectTs: eventTime,
  horizon: z.enum(OUTCOME_HORIZONS),
  entryPrice: z.number().finite(),
  forwardReturn: z.number().finite().nullable(),
  maxDrawdown: z.number().finite().max(0).nullable(),
  peakReturn: z.number().finite().min(0).nullable(),
  timeToPeakMs: z.number().int().min(0).nullable(),
  died: z.boolean(),
  lastPrice: usd.nullable(),
  resolvedAt: eventTime,
});
export type Outcome = z.infer<typeof OutcomeSchema>;

/** A subject as the engine started tracking it: what the outcomes stage needs to resolve it. */
export const OutcomeSubjectRecordSchema = z.strictObject({
  kind: z.enum(['snapshot', 'call']),
  subjectId: z.string().min(1),
  tokenId,
  ts: eventTime,
  entryPrice: z.number().finite(),
  entryLiquidity: z.number().finite().nullable(),
});
export type OutcomeSubjectRecord = z.infer<typeof OutcomeSubjectRecordSchema>;

/** A tracked snapshot's analog vector inputs (processors/quant-engine/analogs/vector.ts): what the analogs stage pools. */
export const AnalogInputsRecordSchema = z.strictObject({
  snapshotId: z.string().min(1),
  tokenId,
  ts: eventTime,
  momentum: nullableNumber,
  crowding: nullableNumber,
  earlyQuality: nullableNumber,
  narrativeVelocity: nullableNumber,
  priceChange1h: nullableNumber,
  volumeAcceleration: nullableNumber,
  liquidityUsd: nullableNumber,
});
export type AnalogInputsRecord = z.infer<typeof AnalogInputsRecordSchema>;

/** What scoring a feature snapshot joins from the engine's social modules as of its time: the scores stage's other input. */
export const ScoreInputsRecordSchema = z.strictObject({
  snapshotId: z.string().min(1),
  tokenId,
  ts: eventTime,
  smartCohortMentions24h: z.number().int().nonnegative(),
  smartCohortMembers24h: z.number().int().nonnegative(),
  smartCohortSize: z.number().int().nonnegative(),
  narrativeShareChange24h: nullableNumber,
  outcomeTracked: z.boolean(),
});
export type ScoreInputsRecord = z.infer<typeof ScoreInputsRecordSchema>;
