import { z } from 'zod';

/** Field rules shared by the record validators. */

export const CHAINS = ['solana', 'robinhood', 'base', 'bnb', 'eth', 'arc'] as const;
export type Chain = (typeof CHAINS)[number];

export const POST_KINDS = ['post', 'reply', 'repost', 'quote'] as const;

/** Event times before 2009 or after 2100 are taken as unit mistakes (seconds vs ms). */
export const eventTime = z.number().int().min(1_230_768_000_000).max(4_102_444_800_000);
export const count = z.number().int().min(0);
export const usd = z.number().finite().min(0);
export const fraction = z.number().min(0).max(1);
export const slug = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a lower-case slug like ai-agents');
export const tokenId = z.string().regex(/^tk_[A-Za-z0-9]+$/, 'must be tk_<id>');
export const nullableNumber = z.number().finite().nullable();

export const SCORE_NAMES = [
  'momentum',
  'conviction',
  'crowding',
  'early_quality',
  'narrative_velocity',
  'divergence',
  'smart_cohort',
] as const;
export type ScoreName = (typeof SCORE_NAMES)[number];

export const CONFIDENCE_LEVELS = ['HIGH', 'MEDIUM', 'LOW'] as const;
export type Confidence = (typeof CONFIDENCE_LEVELS)[number];

export const DIVERGENCE_STATES = ['social_leading', 'price_leading', 'aligned', 'none'] as const;
export type DivergenceState = (typeof DIVERGENCE_STATES)[number];

/** Spec 2.5: analogs' 24 h outcomes, as fractions. */
export const AnalogSummarySchema = z.strictObject({
  n: count,
  median24h: nullableNumber,
  worstDrawdown24h: z.number().finite().max(0).nullable(),
  positiveShare: fraction.nullable(),
  confidence: z.enum(CONFIDENCE_LEVELS),
});

/** The fields that open every snapshot record (features and quant snapshots): whose, when, where. */
export const snapshotHeader = {
  snapshotId: z.string().regex(/^snap_[0-9a-f]+$/),
  tokenId,
  ts: eventTime,
  symbol: z.string().min(1),
  chain: z.enum(CHAINS),
  narrative: z.string().min(1),
};

/**
 * A map from string keys to `value`, accepting and refusing exactly what
 * z.record(z.string(), value) does, for the flat maps every snapshot and signal carries
 * (features, scores, model versions): zod's record runs two schemas per entry and builds a
 * new object, a third of a snapshot's validation, which every consumer of the quant topics
 * pays per record. `accepts` is `value`'s rule as a plain predicate, checked in one loop;
 * only a map it refuses goes through zod's record, which names each offending key.
 * The map passes through as it came.
 */
export function stringMap<T extends z.ZodType>(value: T, accepts: (v: unknown) => boolean): z.ZodType<Record<string, z.output<T>>> {
  const record = z.record(z.string(), value);
  return z.custom<Record<string, z.output<T>>>().check((ctx) => {
    if (isMapOf(ctx.value, accepts)) return;
    for (const issue of record.safeParse(ctx.value).error?.issues ?? []) ctx.issues.push(issue as (typeof ctx.issues)[number]);
  });
}

function isMapOf(input: unknown, accepts: (v: unknown) => boolean): boolean {
  // Anything but a plain object with string keys is left to zod.
  if (typeof input !== 'object' || input === null || Object.getPrototypeOf(input) !== Object.prototype) return false;
  if (Object.getOwnPropertySymbols(input).length > 0) return false;
  for (const key in input) if (!accepts((input as Record<string, unknown>)[key])) return false;
  return true;
}

/** The predicates of `nullableNumber`, `z.number().min(0).max(100).nullable()` and `z.string().min(1)`. */
export const isNullableFinite = (v: unknown): boolean => v === null || (typeof v === 'number' && Number.isFinite(v));
export const isNullablePercent = (v: unknown): boolean => v === null || (typeof v === 'number' && v >= 0 && v <= 100);
export const isNonEmptyString = (v: unknown): boolean => typeof v === 'string' && v.length >= 1;
