import { z } from 'zod';
import {
  FALSE_POSITIVE_RETURN,
  HIGH_CONFIDENCE_SAMPLES,
  HIT_RETURN,
  MEDIUM_CONFIDENCE_SAMPLES,
  MIN_SCORE_SAMPLES,
  MIN_SECTOR_SAMPLES,
} from '../../processors/quant-engine/authors/metrics.ts';
import { CROWD_AUTHORS } from '../../processors/quant-engine/authors/authors.ts';
import { CONVERGENCE_WINDOW_MINUTES } from '../../processors/quant-engine/cohorts/cohorts.ts';
import { slug } from '../../schemas/records/primitives.ts';
import {
  AUTHOR_CONFIDENCE,
  COHORT_KINDS,
  CohortMemberSchema,
  NarrativeContributorSchema,
  NarrativeTokenCountSchema,
  SectorStrengthSchema,
} from '../../schemas/records/quant-social.ts';
import { asOfField, asOfParam, isoTime, listOf, named, resourceHeader } from './common.ts';
import { SignalSchema } from './signals.ts';
import { TokenSchema } from './token.ts';

/** Author metrics, cohorts and narratives (spec 2.9, 4.3). */

const pct = (x: number) => `${Math.round(x * 100)}%`;
const fractionOrNull = (what: string, nullWhen: string) => z.number().nullable().describe(`${what} Null ${nullWhen}.`);
const NO_RESOLVED = 'without a resolved call';

// ---- authors ----

const SectorStrength = named(
  'SectorStrength',
  SectorStrengthSchema,
  `The author's record within one narrative, over its resolved calls there (at least ${MIN_SECTOR_SAMPLES}): ` +
    '`hit_rate` (fraction), `median_return_24h` (fraction; null when no call there has a 24 h return) and ' +
    '`relative_hit_rate` (the sector hit rate minus the overall hit rate).',
);

export const AuthorMetricsSchema = named(
  'AuthorMetrics',
  z.strictObject({
    ...resourceHeader('author_metrics'),
    authorId: z.string(),
    handle: z.string().describe('Handle without @.'),
    asOf: isoTime.describe(
      'The point in time these metrics describe: the `as_of` asked, or without it the time of the latest version (`version_at`). Only ' +
        'calls made and outcomes resolved by then count.',
    ),
    versionAt: isoTime.describe('When the version of the metrics in effect at `as_of` was computed (hourly, and on each resolved call).'),
    modelVersion: z.string().describe('Version of the metric definitions.'),
    calls: z.strictObject({
      total: z.number().int().min(0).describe("Calls made: an author's first mention of a token, or the first after 7 days without mentioning it."),
      unpriced: z.number().int().min(0).describe('Calls on a token without a price at the time; counted, never scored.'),
      resolved: z.number().int().min(0).describe('Priced calls whose 24 h outcome is known: the sample of every rate below.'),
      hits: z.number().int().min(0).describe(`Resolved calls with a 24 h return of at least +${pct(HIT_RETURN)} on a token that did not die.`),
    }),
    hitRate: z
      .strictObject({
        value: z.number().min(0).max(1).describe('hits / resolved.'),
        low: z.number().min(0).max(1),
        high: z.number().min(0).max(1),
        confidenceLevel: z.literal(0.95),
      })
      .nullable()
      .describe(`Hit rate with its 95% Wilson score interval [low, high]. Null ${NO_RESOLVED}.`),
    medianLeadTimeMs: z
      .number()
      .int()
      .min(0)
      .nullable()
      .describe(
        `Median time in ms from a call to the token's crowd (${CROWD_AUTHORS} unique authors within an hour), within 7 days. Null when no call drew a crowd.`,
      ),
    leadTimeSamples: z.number().int().min(0).describe('Calls with a lead time: the sample of the median lead time.'),
    falsePositiveRate: fractionOrNull(
      `Share of resolved calls with a 24 h return of ${pct(FALSE_POSITIVE_RETURN)} or worse, or whose token died within the 24 h.`,
      NO_RESOLVED,
    ),
    medianMaxDrawdown24h: fractionOrNull('Median of the largest drop within 24 h after each resolved call (fraction, ≤ 0).', 'without a drawdown'),
    medianReturn24h: fractionOrNull('Median 24 h return of the resolved calls (fraction; a dead token counts −1).', NO_RESOLVED),
    consistency: fractionOrNull(
      "Share of the author's active weeks (Monday to Monday, UTC) whose hit rate was at least the overall one.",
      'below 3 active weeks',
    ),
    activeWeeks: z.number().int().min(0).describe('Weeks with at least one resolved call.'),
    outcomeVolatility: fractionOrNull('Sample standard deviation of the 24 h returns of the resolved calls.', 'below two returns'),
    sectorStrength: z
      .array(SectorStrength)
      .describe(`Per narrative with at least ${MIN_SECTOR_SAMPLES} resolved calls, best hit rate first; narratives with fewer are left out.`),
    researchScore: z
      .number()
      .min(0)
      .max(100)
      .nullable()
      .describe(
        `0–100 blend of hit rate, mean 24 h return and (1 − false-positive rate), each shrunk towards a sceptical prior; an author with no record sits near 43. Null below ${MIN_SCORE_SAMPLES} resolved calls.`,
      ),
    confidence: z
      .enum(AUTHOR_CONFIDENCE)
      .describe(`By resolved calls: HIGH from ${HIGH_CONFIDENCE_SAMPLES}, MEDIUM from ${MEDIUM_CONFIDENCE_SAMPLES}, LOW below.`),
    confidenceReason: z.string().nullable().describe('Why confidence is below HIGH; null at HIGH.'),
  }),
  "An author's point-in-time track record, built only from their calls' outcomes and timing, never from follower counts.",
);

export const HandleParamsSchema = z.strictObject({
  handle: z
    .string()
    .regex(/^@?[A-Za-z0-9_]{1,50}$/, 'must be a handle, with or without a leading @')
    .describe('Author handle, with or without a leading @ (case-insensitive).'),
});

export const AsOfQuerySchema = z.strictObject({ as_of: asOfParam });

// ---- cohorts ----

const cohortId = z
  .string()
  .regex(/^cohort_[A-Za-z0-9_-]{1,64}$/, 'must be cohort_<id>')
  .describe('Cohort id, `cohort_<id>`.');

const CohortMember = named(
  'CohortMember',
  CohortMemberSchema,
  'A member: `author_id` is null while a handle added to a manual cohort was never seen in a post.',
);

const cohortFields = {
  ...resourceHeader('cohort'),
  id: cohortId,
  kind: z.enum(COHORT_KINDS).describe('`auto`: chosen by a rule over author metrics, visible to every key; `manual`: chosen by its owner.'),
  name: z.string(),
  rule: z.string().describe('How members are chosen.'),
  ownerKeyId: z.string().nullable().describe('The key that owns a manual cohort; null for auto cohorts.'),
  teamId: z.string().nullable().describe('The team a manual cohort is shared with; null when not shared.'),
  version: z.number().int().min(1).describe('Membership version; each change of members or sharing adds one.'),
  updatedAt: isoTime.describe('When this membership version took effect.'),
  memberCount: z.number().int().min(0),
  members: z.array(CohortMember),
};

export const CohortSummarySchema = named('CohortSummary', z.strictObject(cohortFields), 'A cohort of authors and its current members.');

export const CohortListSchema = listOf('CohortList', CohortSummarySchema, { total: true, asOf: true });

export const COHORT_ACTIVITY_HOURS = 24;

const CollectiveActivity = named(
  'CohortActivity',
  z.strictObject({
    from: isoTime.describe('Window start (exclusive).'),
    to: isoTime.describe('Window end (inclusive): the `as_of` of the answer.'),
    mentions: z.number().int().min(0).describe('Token mentions by members in the window (one per post and token).'),
    activeMembers: z.number().int().min(0).describe('Members with at least one mention in the window.'),
    tokenCount: z.number().int().min(0).describe('Distinct tokens the members mentioned.'),
    topTokens: z
      .array(
        z.strictObject({
          token: TokenSchema.nullable().describe('Null only while the token metadata has not yet reached the store.'),
          mentions: z.number().int().min(0),
          members: z.number().int().min(0).describe('Members who mentioned it.'),
        }),
      )
      .describe('The most mentioned tokens, most mentions first, at most 10.'),
  }),
  `What the members posted about tokens in the ${COHORT_ACTIVITY_HOURS} hours up to the answer's \`as_of\`. Members without a known author id are not counted.`,
);

const ConvergenceEvent = named(
  'ConvergenceEvent',
  z.strictObject({
    id: z.string().describe('`cev_<hex>`.'),
    at: isoTime.describe('When the cohort converged.'),
    token: TokenSchema.nullable().describe('Null only while the token metadata has not yet reached the store.'),
    cohortVersion: z.number().int().min(1).describe('Membership version the event was measured against.'),
    memberCount: z.number().int().min(0).describe('Members who mentioned the token within the window.'),
    cohortSize: z.number().int().min(0).describe('Members of the cohort at the time.'),
    windowMinutes: z.number().int().min(1),
    members: z.array(z.string()).describe('The converging members: author ids, or `@handle` for a member never seen in a post.'),
    score: z
      .number()
      .min(0)
      .max(100)
      .describe(
        '0–100: 40% tightness of the mentions in the window, 35% the members\' mean research score (50 when unknown), 25% earliness (few outside authors on the token in the last hour).',
      ),
  }),
  `Several members of a cohort (at least 3, and at least 10% of it) mentioning one token within ${CONVERGENCE_WINDOW_MINUTES} minutes.`,
);

export const CONVERGENCE_EVENTS_SHOWN = 50;
export const COHORT_ACTIVE_SIGNALS_SHOWN = 50;

export const CohortSchema = named(
  'Cohort',
  z.strictObject({
    ...cohortFields,
    collectiveActivity: CollectiveActivity,
    tokens: z
      .array(
        z.strictObject({
          token: TokenSchema.nullable().describe('Null only while the token metadata has not yet reached the store.'),
          convergenceEvents: z.number().int().min(1).describe('Of the convergence events listed, those on this token.'),
          lastConvergedAt: isoTime,
        }),
      )
      .describe('The tokens of the convergence events listed, most recent convergence first.'),
    activeSignals: z
      .array(SignalSchema)
      .describe(`Signals active at \`as_of\` on those tokens, newest first, at most ${COHORT_ACTIVE_SIGNALS_SHOWN}.`),
    convergenceEvents: z.array(ConvergenceEvent).describe(`The latest convergence events, newest first, at most ${CONVERGENCE_EVENTS_SHOWN}.`),
    asOf: asOfField.unwrap().describe(
      'The time this answer is for: the `as_of` asked, or without it the time of the newest mention stored (what the activity reaches).',
    ),
  }),
  'A cohort with its members, collective activity, the tokens it converged on, their active signals and its convergence events.',
);

export const CohortListQuerySchema = z.strictObject({
  kind: z.enum(['manual', 'auto', 'all']).default('all').describe('`manual`, `auto` or `all`.'),
  as_of: asOfParam,
});

export const CohortParamsSchema = z.strictObject({ id: cohortId });

// ---- narratives ----

export const NarrativeSchema = named(
  'Narrative',
  z.strictObject({
    ...resourceHeader('narrative'),
    slug: slug.describe('Narrative slug, e.g. `ai-agents`.'),
    bucketStart: isoTime.describe('Start of the latest closed hourly bucket; every value below is of that hour unless said otherwise.'),
    attentionShare: fractionOrNull("The narrative's mentions over all token mentions in the hour.", 'when the hour had no mentions at all'),
    attentionShare24h: fractionOrNull('The same share over the 24 hours ending with the hour.', 'when those hours had no mentions'),
    attentionShareChange24h: z
      .number()
      .nullable()
      .describe('24 h growth: attention_share_24h minus the share of the 24 hours before; null until 48 hours of history exist.'),
    theses: z.number().int().min(0).describe('Posts mentioning tokens of the narrative (a post naming two of its tokens counts once).'),
    mentions: z.number().int().min(0),
    uniqueAuthors: z.number().int().min(0),
    newAuthors: z.number().int().min(0).describe('Authors mentioning the narrative for the first time.'),
    authorGrowth: z
      .number()
      .nullable()
      .describe('(unique_authors + 1) / (mean unique authors of up to 24 previous hours + 1) − 1; null in the first hour.'),
    topTokens: z
      .array(named('NarrativeTokenCount', NarrativeTokenCountSchema, 'A token with its mentions in the hour; `symbol` is null when unknown.'))
      .describe('Most mentioned tokens of the hour, at most 5.'),
    topContributors: z
      .array(named('NarrativeContributor', NarrativeContributorSchema, 'An author with their posts on the narrative in the hour.'))
      .describe('Authors with the most posts in the hour, at most 5.'),
  }),
  'A narrative (a topic group of tokens) as of its latest closed hour.',
);

export const NarrativeListSchema = listOf('NarrativeList', NarrativeSchema, { total: true, asOf: true });

export const NarrativeDetailSchema = named(
  'NarrativeDetail',
  z.strictObject({
    ...NarrativeSchema.shape,
    asOf: asOfField.unwrap().describe('The time this answer is for: the `as_of` asked, or without it the newest hour close up to which every narrative\'s bucket is stored.'),
  }),
  'A narrative as of its latest hour closed by `as_of`.',
);

const narrativeAsOf = asOfField.describe(
  'The time this answer is for: the `as_of` asked, or without it the newest hour close up to which every narrative\'s bucket is stored; null before any narrative data.',
);

export const NarrativeRotationSchema = named(
  'NarrativeRotation',
  z.strictObject({
    ...resourceHeader('narrative_rotation'),
    window: z.enum(['24h', '7d']),
    from: isoTime.nullable().describe('Start of the window; null when no narrative data exists yet.'),
    to: isoTime.nullable().describe('End of the window (exclusive): the end of the latest closed hour.'),
    narratives: z
      .array(
        z.strictObject({
          slug,
          share: fractionOrNull("The narrative's mentions over all mentions in the window.", 'when the window had no mentions'),
          previousShare: fractionOrNull('The same over the window of equal length before.', 'when that window had no mentions (or lies before the data)'),
          change: z.number().nullable().describe('share − previous_share; null when either is null.'),
        }),
      )
      .describe('Largest change first; unknown changes last.'),
    asOf: narrativeAsOf,
  }),
  'Attention-share change per narrative between a window and the one before it.',
);

export const RotationQuerySchema = z.strictObject({ window: z.enum(['24h', '7d']).default('24h'), as_of: asOfParam });

export const HeatmapQuerySchema = z.strictObject({
  metric: z.enum(['theses', 'author_growth']).default('theses'),
  bucket: z.enum(['1h', '6h', '1d']).default('1h'),
  range: z.enum(['48h', '7d', '30d']).default('48h'),
  as_of: asOfParam,
});

export const NarrativeHeatmapSchema = named(
  'NarrativeHeatmap',
  z.strictObject({
    ...resourceHeader('narrative_heatmap'),
    metric: z.enum(['theses', 'author_growth']),
    bucket: z.enum(['1h', '6h', '1d']),
    range: z.enum(['48h', '7d', '30d']),
    columns: z
      .array(isoTime)
      .describe('Column starts, each `bucket` long and aligned to multiples of it (UTC); the last holds the end of the latest closed hour.'),
    rows: z.array(
      z.strictObject({
        slug,
        values: z
          .array(z.number().nullable())
          .describe(
            'One raw value per column. theses: posts, 0 for a column without data. author_growth: as the narrative field at 1h; ' +
              'at 6h and 1d (u + 1) / (mean u of up to 4 previous columns + 1) − 1 with u the distinct authors of the column; null without a baseline or data.',
          ),
        intensity: z
          .array(z.number().min(0).max(1))
          .describe("value / the row's largest value, in [0, 1]; 0 for null or negative values and in rows whose largest value is not positive."),
      }),
    ),
    asOf: narrativeAsOf,
  }),
  'Narratives by time: raw values and per-row intensity.',
);

export const NarrativeParamsSchema = z.strictObject({ slug: slug.describe('Narrative slug, e.g. `ai-agents`.') });
