import { z } from 'zod';
import { count, eventTime, fraction, slug, tokenId } from './primitives.ts';

/**
 * The social-analytics record types of the quant engine: authors' calls and metrics,
 * cohort commands, membership versions and convergence events, and hourly narrative
 * buckets. Avro (schemas/avro/<type>/v1.avsc) fixes their structure; these validators add
 * the semantic rules Avro cannot express. Field names match the Avro schemas one to one.
 */

const cohortId = z.string().regex(/^cohort_[A-Za-z0-9_-]{1,64}$/, 'must be cohort_<id>');
const score = z.number().min(0).max(100);

export const AuthorCallSchema = z.strictObject({
  callId: z.string().regex(/^call_[0-9a-f]+$/),
  authorId: z.string().min(1),
  handle: z.string().min(1),
  tokenId,
  narrative: slug.nullable(),
  postId: z.string().min(1),
  ts: eventTime,
  entryPrice: z.number().positive().finite().nullable(),
});
export type AuthorCall = z.infer<typeof AuthorCallSchema>;

export const AUTHOR_CONFIDENCE = ['LOW', 'MEDIUM', 'HIGH'] as const;
export type AuthorConfidence = (typeof AUTHOR_CONFIDENCE)[number];

export const SectorStrengthSchema = z.strictObject({
  narrative: slug,
  samples: count,
  hitRate: fraction,
  medianReturn24h: z.number().finite().nullable(),
  relativeHitRate: z.number().min(-1).max(1),
});
export type SectorStrength = z.infer<typeof SectorStrengthSchema>;

export const AuthorMetricsSchema = z.strictObject({
  authorId: z.string().min(1),
  handle: z.string().min(1),
  ts: eventTime,
  version: z.number().int().min(1),
  modelVersion: z.string().min(1),
  callsTotal: count,
  callsUnpriced: count,
  resolvedCalls: count,
  hits: count,
  hitRate: fraction.nullable(),
  hitRateLow: fraction.nullable(),
  hitRateHigh: fraction.nullable(),
  leadTimeSamples: count,
  medianLeadTimeMs: count.nullable(),
  falsePositiveRate: fraction.nullable(),
  medianMaxDrawdown24h: z.number().min(-1).max(0).nullable(),
  medianReturn24h: z.number().finite().nullable(),
  consistency: fraction.nullable(),
  activeWeeks: count,
  outcomeVolatility: z.number().min(0).finite().nullable(),
  sectorStrength: z.array(SectorStrengthSchema),
  researchScore: score.nullable(),
  confidence: z.enum(AUTHOR_CONFIDENCE),
  confidenceReason: z.string().nullable(),
});
export type AuthorMetrics = z.infer<typeof AuthorMetricsSchema>;

export const COHORT_ACTIONS = ['create', 'set_members', 'share', 'delete'] as const;
export const COHORT_KINDS = ['manual', 'auto'] as const;
export type CohortKind = (typeof COHORT_KINDS)[number];

export const CohortCommandSchema = z
  .strictObject({
    commandId: z.string().min(1).max(128),
    action: z.enum(COHORT_ACTIONS),
    cohortId,
    name: z.string().min(1).max(80).nullable(),
    ownerKeyId: z.string().min(1),
    teamId: z.string().min(1).nullable(),
    /** Handles (with or without @) or author ids. */
    members: z.array(z.string().regex(/^@?[A-Za-z0-9_]{1,64}$/, 'must be a handle or an author id')).max(500),
    ts: eventTime,
  })
  .refine((c) => c.action !== 'create' || c.name !== null, { message: 'create needs a name', path: ['name'] });
export type CohortCommand = z.infer<typeof CohortCommandSchema>;

export const CohortMemberSchema = z.strictObject({
  /** Null while the handle was never seen in a post. */
  authorId: z.string().min(1).nullable(),
  handle: z.string().min(1),
});
export type CohortMember = z.infer<typeof CohortMemberSchema>;

export const CohortVersionSchema = z.strictObject({
  cohortId,
  kind: z.enum(COHORT_KINDS),
  name: z.string().min(1),
  ownerKeyId: z.string().min(1).nullable(),
  teamId: z.string().min(1).nullable(),
  members: z.array(CohortMemberSchema),
  version: z.number().int().min(1),
  ts: eventTime,
  rule: z.string().min(1),
  deleted: z.boolean(),
  commandId: z.string().min(1).nullable(),
});
export type CohortVersion = z.infer<typeof CohortVersionSchema>;

export const ConvergenceEventSchema = z.strictObject({
  eventId: z.string().regex(/^cev_[0-9a-f]+$/),
  cohortId,
  cohortKind: z.enum(COHORT_KINDS),
  cohortName: z.string().min(1),
  cohortVersion: z.number().int().min(1),
  ownerKeyId: z.string().min(1).nullable(),
  teamId: z.string().min(1).nullable(),
  tokenId,
  ts: eventTime,
  memberCount: count,
  cohortSize: count,
  windowMinutes: z.number().int().positive(),
  members: z.array(z.string().min(1)),
  score,
});
export type ConvergenceEvent = z.infer<typeof ConvergenceEventSchema>;

export const NarrativeTokenCountSchema = z.strictObject({
  tokenId,
  symbol: z.string().nullable(),
  mentions: count,
});

export const NarrativeContributorSchema = z.strictObject({
  authorId: z.string().min(1),
  handle: z.string().min(1),
  posts: count,
});

export const NarrativeBucketSchema = z.strictObject({
  narrative: slug,
  bucketStart: eventTime,
  ts: eventTime,
  theses: count,
  mentions: count,
  totalMentions: count,
  uniqueAuthors: count,
  newAuthors: count,
  authorIds: z.array(z.string().min(1)),
  authorGrowth: z.number().min(-1).finite().nullable(),
  attentionShare: fraction.nullable(),
  attentionShare24h: fraction.nullable(),
  attentionShareChange24h: z.number().min(-1).max(1).nullable(),
  topTokens: z.array(NarrativeTokenCountSchema).max(5),
  topContributors: z.array(NarrativeContributorSchema).max(5),
});
export type NarrativeBucket = z.infer<typeof NarrativeBucketSchema>;
