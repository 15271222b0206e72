import { z } from 'zod';
import {
  AnalogSummarySchema,
  CONFIDENCE_LEVELS,
  count,
  DIVERGENCE_STATES,
  eventTime,
  fraction,
  isNonEmptyString,
  isNullableFinite,
  nullableNumber,
  SCORE_NAMES,
  snapshotHeader,
  stringMap,
  usd,
  type ScoreName,
} from './primitives.ts';

/**
 * The quant snapshot of a token (spec 2.3): scores with their drivers, active signals,
 * market and activity blocks, divergence state, the feature vector, the analog summary,
 * model versions and freshness. Avro schema: schemas/avro/quant-snapshot.
 */

const score = z.number().min(0).max(100);
const nullableCount = count.nullable();

export const QuantScoreDriverSchema = z.strictObject({
  name: z.string().min(1),
  contribution: z.number().finite(),
});

export const QuantScoreDetailSchema = z
  .strictObject({
    score: z.enum(SCORE_NAMES),
    value: score.nullable(),
    drivers: z.array(QuantScoreDriverSchema),
    confidence: z.enum(CONFIDENCE_LEVELS),
    reason: z.string().min(1).nullable(),
    modelVersion: z.string().regex(/^[a-z_]+@\d+$/),
  })
  .superRefine((d, ctx) => {
    if (d.value === null) {
      if (d.reason === null) ctx.addIssue({ code: 'custom', path: ['reason'], message: 'a null score needs its reason' });
      if (d.drivers.length > 0) ctx.addIssue({ code: 'custom', path: ['drivers'], message: 'a null score has no drivers' });
      return;
    }
    const sum = d.drivers.reduce((s, x) => s + x.contribution, 0);
    if (sum !== d.value) ctx.addIssue({ code: 'custom', path: ['drivers'], message: `drivers sum to ${sum}, not ${d.value}` });
    if (d.confidence !== 'HIGH' && d.reason === null) ctx.addIssue({ code: 'custom', path: ['reason'], message: 'confidence below HIGH needs its reason' });
  });

const nullableScore = score.nullable();
/** Every score by name, null where the data is insufficient (the detail says why). */
export const QuantScoresSchema = z.strictObject({
  momentum: nullableScore,
  conviction: nullableScore,
  crowding: nullableScore,
  early_quality: nullableScore,
  narrative_velocity: nullableScore,
  divergence: nullableScore,
  smart_cohort: nullableScore,
} satisfies Record<ScoreName, z.ZodType>);

export const QuantActiveSignalSchema = z.strictObject({
  signalId: z.string().regex(/^sig_[A-Za-z0-9]+$/),
  type: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'must be upper snake case'),
  ruleVersion: z.string().regex(/^[A-Za-z0-9_.-]+@\d+$/, 'must be <rule_name>@<version>'),
  firedAt: eventTime,
  strength: z.number().finite(),
});

export const QuantMarketSchema = z.strictObject({
  priceUsd: usd.nullable(),
  priceChange15m: nullableNumber,
  priceChange1h: nullableNumber,
  priceChange24h: nullableNumber,
  volume1h: usd.nullable(),
  volume24h: usd.nullable(),
  volumeAcceleration: nullableNumber,
  liquidityUsd: usd.nullable(),
  marketCapUsd: usd.nullable(),
  trades1h: nullableCount,
});
export type QuantMarket = z.infer<typeof QuantMarketSchema>;

export const QuantActivitySchema = z.strictObject({
  mentions1h: nullableCount,
  mentions24h: nullableCount,
  uniqueAuthors1h: nullableCount,
  uniqueAuthors24h: nullableCount,
  mentionVelocity15m: nullableNumber,
  mentionVelocity1h: nullableNumber,
  newAuthorShare1h: fraction.nullable(),
  qualityWeightedAttention1h: nullableNumber,
  engagement1h: nullableCount,
  engagement24h: nullableCount,
});
export type QuantActivity = z.infer<typeof QuantActivitySchema>;

export const QuantFreshnessSchema = z.strictObject({
  updatedAt: eventTime,
  sourceLastEventAt: eventTime.nullable(),
  marketLastAt: eventTime.nullable(),
  sourceLagMs: count.nullable(),
  marketLagMs: count.nullable(),
  stale: z.boolean(),
  staleReasons: z.array(z.string().min(1)),
});
export type QuantFreshness = z.infer<typeof QuantFreshnessSchema>;

export const QuantSnapshotSchema = z.strictObject({
  ...snapshotHeader,
  scores: QuantScoresSchema,
  scoreDetails: z.array(QuantScoreDetailSchema).length(SCORE_NAMES.length),
  activeSignals: z.array(QuantActiveSignalSchema),
  market: QuantMarketSchema,
  activity: QuantActivitySchema,
  divergenceState: z.enum(DIVERGENCE_STATES),
  features: stringMap(nullableNumber, isNullableFinite),
  analogs: AnalogSummarySchema.nullable(),
  modelVersions: stringMap(z.string().min(1), isNonEmptyString),
  freshness: QuantFreshnessSchema,
});
export type QuantSnapshot = z.infer<typeof QuantSnapshotSchema>;
