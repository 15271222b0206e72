import type { ScoreName } from '../contracts.ts';
import { FEATURE_VERSION } from '../features/definitions.ts';
import { ANALOG_MODEL_VERSION } from '../analogs/analogs.ts';

/**
 * The score models as data: what each score measures, its drivers with their maximum
 * points, its inputs and when it is null. GET /v1/models serves this; scores.ts reads the
 * points and scales from here, so the documentation and the computation cannot drift apart.
 */

/** Rules every score model follows. */
export const SCORE_RULES: readonly string[] = [
  'A score is the sum of its drivers\' contributions, 0-100.',
  'Contributions are quarter points: sums of multiples of 0.25 are exact in binary floating point, so the drivers add up to the score exactly in any order. Rounding remainders go to the driver with the largest raw contribution.',
  'Each driver maps one input onto 0..1 (or -1..1 for a signed driver) and scales it by its maximum points.',
  'An optional input that is unavailable is left out of the drivers; its points are spread over the present drivers in proportion, and confidence drops to MEDIUM while less than half of the points are missing, LOW from half. The reason names what is missing.',
  'A score is null only when a required input is unavailable; then it has no drivers, confidence LOW and the reason.',
];

export const SCORE_STEP = 0.25;

export interface ScoreDriverDoc {
  name: string;
  /** Points the driver contributes at full strength (before spreading missing drivers' points). */
  maxPoints: number;
  /** How the input maps onto the driver's strength. */
  definition: string;
  /** An unavailable optional input is left out; a required one makes the score null. */
  required: boolean;
}

export interface ScoreModelDoc {
  score: ScoreName;
  modelVersion: string;
  measures: string;
  /** Rule fields (features, or named side inputs) the score reads. */
  inputs: string[];
  drivers: ScoreDriverDoc[];
  nullWhen: string[];
  confidence: string;
}

/** Constants of the mappings, shared by the documentation strings and scores.ts. */
export const SCALES = {
  priceChange1hFull: 0.1,
  priceChange24hFull: 0.5,
  crowdingPriceChange24hFull: 1,
  volumeAccelerationFull: 3,
  momentumVelocityFull: 3,
  crowdingVelocityFull: 5,
  qualityAttentionFull: 5,
  convictionAuthorsFull: 50,
  engagementPerMentionFull: 200,
  crowdingAuthorsFull: 100,
  earlinessAuthorsFull: 100,
  narrativeShareFull: 0.25,
  narrativeChangeFull: 0.05,
  divergenceVelocityOctaves: 2,
  smartBreadthFull: 0.25,
  smartMentionsFull: 20,
  thinLiquidityUsd: 10_000,
} as const;

const S = SCALES;
const LOG_NOTE = 'log1p(x) / log1p(full), capped at 1';

export const SCORE_MODELS: Record<ScoreName, ScoreModelDoc> = {
  momentum: {
    score: 'momentum',
    modelVersion: 'momentum@1',
    measures: 'How strongly price, volume and attention are rising right now. 0 means flat or falling.',
    inputs: ['price_change_1h', 'price_change_24h', 'volume_acceleration', 'volume_24h', 'mention_velocity_1h', 'liquidity_usd'],
    drivers: [
      { name: 'price_change_1h', maxPoints: 35, required: true, definition: `price_change_1h / ${S.priceChange1hFull}, clamped to 0..1 (+10% in an hour is full).` },
      { name: 'price_change_24h', maxPoints: 20, required: false, definition: `price_change_24h / ${S.priceChange24hFull}, clamped to 0..1 (+50% in a day is full).` },
      {
        name: 'volume_acceleration',
        maxPoints: 20,
        required: false,
        definition: `(volume_acceleration - 1) / ${S.volumeAccelerationFull - 1}, clamped to 0..1 (3x the hourly average is full); 0 when volume_24h is 0.`,
      },
      {
        name: 'mention_velocity_1h',
        maxPoints: 25,
        required: false,
        definition: `(mention_velocity_1h - 1) / ${S.momentumVelocityFull - 1}, clamped to 0..1 (3x the hourly average is full); 0 without mentions in 24h.`,
      },
    ],
    nullWhen: ['no market data yet', 'less than 1h of price history (price_change_1h unavailable)'],
    confidence: `LOW when liquidity_usd is below $${S.thinLiquidityUsd} (price moves are noisy); otherwise by missing inputs.`,
  },
  conviction: {
    score: 'conviction',
    modelVersion: 'conviction@1',
    measures: 'How credible and committed the attention on the token is: research quality of the authors, breadth of authors, engagement per mention.',
    inputs: ['quality_weighted_attention_1h', 'unique_authors_24h', 'engagement_24h', 'mentions_24h'],
    drivers: [
      {
        name: 'quality_weighted_attention_1h',
        maxPoints: 40,
        required: true,
        definition: `quality_weighted_attention_1h / ${S.qualityAttentionFull}, clamped to 0..1 (five top-scored authors in the hour is full).`,
      },
      { name: 'unique_authors_24h', maxPoints: 35, required: true, definition: `${LOG_NOTE}, full = ${S.convictionAuthorsFull} authors.` },
      {
        name: 'engagement_per_mention_24h',
        maxPoints: 25,
        required: true,
        definition: `engagement_24h / mentions_24h; ${LOG_NOTE}, full = ${S.engagementPerMentionFull}.`,
      },
    ],
    nullWhen: ['no mentions in the last 24h: there is no attention to judge'],
    confidence: 'LOW below 3 unique authors in 24h, MEDIUM below 10.',
  },
  crowding: {
    score: 'crowding',
    modelVersion: 'crowding@1',
    measures:
      'How crowded and late the trade looks: many authors, a large share of first-time authors, extreme mention velocity, price already up. High means crowded; 0 means nobody is there.',
    inputs: ['unique_authors_24h', 'new_author_share_1h', 'mention_velocity_1h', 'price_change_24h'],
    drivers: [
      { name: 'unique_authors_24h', maxPoints: 30, required: true, definition: `${LOG_NOTE}, full = ${S.crowdingAuthorsFull} authors.` },
      { name: 'new_author_share_1h', maxPoints: 20, required: true, definition: 'new_author_share_1h as is; 0 without authors in the last hour (nobody new arrived).' },
      {
        name: 'mention_velocity_1h',
        maxPoints: 20,
        required: true,
        definition: `(mention_velocity_1h - 1) / ${S.crowdingVelocityFull - 1}, clamped to 0..1 (5x the hourly average is full); 0 without mentions in 24h.`,
      },
      {
        name: 'price_change_24h',
        maxPoints: 30,
        required: false,
        definition: `price_change_24h / ${S.crowdingPriceChange24hFull}, clamped to 0..1 (price doubled in a day is full).`,
      },
    ],
    nullWhen: ['never: without mentions the social drivers are truly 0, and the price driver is optional'],
    confidence: 'By missing inputs only (price_change_24h without market data or a day of price history).',
  },
  early_quality: {
    score: 'early_quality',
    modelVersion: 'early_quality@1',
    measures: "Research quality of the authors talking about the token now, weighted towards setups where the crowd has not arrived yet.",
    inputs: ['quality_weighted_attention_1h', 'unique_authors_1h', 'unique_authors_24h'],
    drivers: [
      {
        name: 'quality_per_author_1h',
        maxPoints: 70,
        required: true,
        definition: 'quality_weighted_attention_1h / unique_authors_1h: the mean research score / 100 of the last hour\'s authors (unscored authors count 0.3).',
      },
      {
        name: 'unique_authors_24h',
        maxPoints: 30,
        required: true,
        definition: `Earliness: 1 - (${LOG_NOTE}), full crowd = ${S.earlinessAuthorsFull} authors.`,
      },
    ],
    nullWhen: ['no authors mentioned the token in the last hour'],
    confidence: 'LOW below 3 unique authors in the last hour, MEDIUM below 5.',
  },
  narrative_velocity: {
    score: 'narrative_velocity',
    modelVersion: 'narrative_velocity@1',
    measures: "How much attention the token's narrative holds and how fast its share of attention is growing.",
    inputs: ['narrative_share', 'narrative_share_change_24h'],
    drivers: [
      {
        name: 'narrative_share',
        maxPoints: 40,
        required: true,
        definition: `narrative_share / ${S.narrativeShareFull}, clamped to 0..1 (a quarter of all mentions is full).`,
      },
      {
        name: 'narrative_share_change_24h',
        maxPoints: 60,
        required: false,
        definition: `(change + ${S.narrativeChangeFull}) / ${2 * S.narrativeChangeFull}, clamped to 0..1: the narrative's share of the last 24h minus that of the 24h before, in share points; -5 points is 0, unchanged is half, +5 points is full.`,
      },
    ],
    nullWhen: ['no complete hour of mentions yet (narrative_share unavailable)'],
    confidence: 'By missing inputs only (the share change needs 48h of narrative history).',
  },
  divergence: {
    score: 'divergence',
    modelVersion: 'divergence@1',
    measures:
      'The gap between social acceleration and the price move over the last hour, signed: 50 means aligned, above 50 social is ahead of price, below 50 price is ahead of social.',
    inputs: ['mention_velocity_1h', 'price_change_1h', 'mentions_24h'],
    drivers: [
      { name: 'baseline', maxPoints: 50, required: true, definition: 'Fixed 50: the aligned point.' },
      {
        name: 'mention_velocity_1h',
        maxPoints: 25,
        required: true,
        definition: `Social acceleration: log2(mention_velocity_1h) / ${S.divergenceVelocityOctaves}, clamped to -1..1 (4x the hourly average is +1, a quarter is -1); 0 without mentions in 24h.`,
      },
      {
        name: 'price_change_1h',
        maxPoints: 25,
        required: true,
        definition: `Price move, subtracted: price_change_1h / ${S.priceChange1hFull}, clamped to -1..1 (+10% in an hour is -25 points, -10% is +25).`,
      },
    ],
    nullWhen: ['no market data yet', 'less than 1h of price history (price_change_1h unavailable)'],
    confidence: 'LOW below 5 mentions in 24h (velocity is noisy), MEDIUM without mentions in 24h (social taken as flat).',
  },
  smart_cohort: {
    score: 'smart_cohort',
    modelVersion: 'smart_cohort@1',
    measures:
      'Attention from the auto cohort cohort_top-research: how many of its members mentioned the token in the last 24h, relative to the cohort size, and how often. Membership is taken as of each mention.',
    inputs: ['top_research_members_24h', 'top_research_mentions_24h', 'top_research_cohort_size'],
    drivers: [
      {
        name: 'top_research_members_24h',
        maxPoints: 70,
        required: true,
        definition: `Distinct members who mentioned the token in the last 24h over the cohort size, / ${S.smartBreadthFull}, clamped to 0..1 (a quarter of the cohort is full).`,
      },
      { name: 'top_research_mentions_24h', maxPoints: 30, required: true, definition: `Members' mentions of the token in the last 24h; ${LOG_NOTE}, full = ${S.smartMentionsFull}.` },
    ],
    nullWhen: ['cohort_top-research has no members yet (no author has a research score at MEDIUM or HIGH confidence)'],
    confidence: 'LOW below 5 cohort members, MEDIUM below the full 20.',
  },
};

export const DIVERGENCE_STATE_RULE =
  'From the divergence drivers as strengths s (social acceleration, -1..1) and p (price move, -1..1), where a side moves from 0.25 and leads by 0.5: ' +
  'social_leading when s >= 0.25 and s - p >= 0.5 (social rising ahead of price); ' +
  'price_leading when p >= 0.25 and p - s >= 0.5 (price rising ahead of social); ' +
  'aligned when |s - p| < 0.5 and either side moves (|s| or |p| >= 0.25); ' +
  'none otherwise: divergence null, nothing moving, or a gap that is no lead (e.g. price falling while social is flat).';


/** Active model versions: every score's, the features' and the analogs'. */
export const MODEL_VERSIONS: Readonly<Record<ScoreName | 'features' | 'analogs', string>> = {
  momentum: SCORE_MODELS.momentum.modelVersion,
  conviction: SCORE_MODELS.conviction.modelVersion,
  crowding: SCORE_MODELS.crowding.modelVersion,
  early_quality: SCORE_MODELS.early_quality.modelVersion,
  narrative_velocity: SCORE_MODELS.narrative_velocity.modelVersion,
  divergence: SCORE_MODELS.divergence.modelVersion,
  smart_cohort: SCORE_MODELS.smart_cohort.modelVersion,
  features: FEATURE_VERSION,
  analogs: ANALOG_MODEL_VERSION,
};
