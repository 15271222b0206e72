import { z } from 'zod';
import { FEATURE_NAMES, type FeatureName } from '../../processors/quant-engine/features/definitions.ts';
import { HISTORY_STEP_NAMES, MAX_HISTORY_LIMIT } from '../../projections/read-models/token-history.ts';
import { asOfField, asOfParam, disclaimer, isoTime, named, resourceHeader, timeParam } from './common.ts';
import { Scores } from './signals.ts';
import { TokenSchema } from './token.ts';

/** GET /v1/quant/token/{token}/history: a token's scores, chosen features and price over time. */

export const MAX_HISTORY_FEATURES = 12;
export const HISTORY_DEFAULT_LIMIT = 500;
const FEATURE_ENUM = FEATURE_NAMES as [FeatureName, ...FeatureName[]];

export const TokenHistoryQuerySchema = z.strictObject({
  step: z.enum(HISTORY_STEP_NAMES).default('1h').describe('Time between two points; points lie on multiples of it (UTC).'),
  from: timeParam
    .optional()
    .describe(
      'First time of the range, ISO-8601 or unix seconds; the first point is the first multiple of `step` at or after it, and none ' +
        "comes before the token's first snapshot. Default: `to` less 288 steps of 5m, 168 of 1h or 90 of 1d, within the plan's reach.",
    ),
  to: timeParam.optional().describe('Last time of the range, ISO-8601 or unix seconds; default and at most `as_of`.'),
  features: z
    .string()
    .transform((text) => [...new Set(text.split(',').map((s) => s.trim()))])
    .pipe(z.array(z.enum(FEATURE_ENUM)).min(1).max(MAX_HISTORY_FEATURES))
    .optional()
    .describe(`Comma-separated feature names (GET /v1/models lists them) to add to each point, at most ${MAX_HISTORY_FEATURES}; none by default.`),
  limit: z.coerce.number().int().min(1).max(MAX_HISTORY_LIMIT).default(HISTORY_DEFAULT_LIMIT).describe(`Points per page, 1 to ${MAX_HISTORY_LIMIT}.`),
  cursor: z
    .string()
    .min(1)
    .optional()
    .describe("`next_cursor` of the previous page of the same query. It carries the first page's `as_of`: send it without `as_of`, or with that same one."),
  as_of: asOfParam,
});

const HistoryPointSchema = named(
  'TokenHistoryPoint',
  z.strictObject({
    ts: isoTime.describe('The point: a multiple of `step`.'),
    snapshotId: z.string().describe('The snapshot in effect then, `snap_<hex>`: the latest of the token at or before `ts`.'),
    snapshotTs: isoTime.describe('Its time, at or before `ts`.'),
    scores: Scores,
    features: z.record(z.string(), z.number().nullable()).describe('The features asked for, by name; null where not available.'),
    priceUsd: z.number().nullable().describe('Price in USD at the snapshot; null before any market data.'),
  }),
  "A token's values at one time, as the service knew them then.",
);

export const TokenHistorySchema = named(
  'TokenHistory',
  z.strictObject({
    ...resourceHeader('list'),
    token: TokenSchema,
    step: z.enum(HISTORY_STEP_NAMES),
    from: isoTime.describe('The range asked, after defaults and the plan: points lie in [from, to].'),
    to: isoTime,
    data: z.array(HistoryPointSchema).describe('Oldest first, one per step.'),
    hasMore: z.boolean(),
    nextCursor: z.string().nullable().describe('Pass back as `cursor` for the next page; null on the last page.'),
    asOf: asOfField.unwrap().describe("The time this answer is for: the `as_of` asked, or without it the token's latest snapshot time."),
    disclaimer,
  }),
  "A token's scores, chosen features and price at each step of a range, point in time: each point from the snapshot in effect then.",
);
