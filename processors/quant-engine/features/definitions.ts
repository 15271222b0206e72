/**
 * Every feature of a snapshot: its name (a scanner rule field), unit and one-line definition.
 * Windows are trailing windows of event time ending at the snapshot time b: (b - W, b].
 * Percentages are fractions (0.05 = 5%). A null value means not available, never zero.
 */

/**
 * @2: a snapshot at grid time b reads author quality and narrative shares as of b (versions
 * due by b), where @1 read them as of the last event before b.
 */
export const FEATURE_VERSION = 'features@2';

export type FeatureUnit = 'count' | 'ratio' | 'fraction' | 'usd' | 'usd_per_token' | 'weighted_authors';

export interface FeatureDefinition {
  unit: FeatureUnit;
  definition: string;
}

/** Weight of an author without a research score yet in quality_weighted_attention_1h. */
export const UNSCORED_AUTHOR_WEIGHT = 0.3;

export const FEATURE_DEFINITIONS = {
  mentions_15m: { unit: 'count', definition: 'Mentions of the token in the last 15 minutes (one per post and token).' },
  mentions_1h: { unit: 'count', definition: 'Mentions of the token in the last hour.' },
  mentions_6h: { unit: 'count', definition: 'Mentions of the token in the last 6 hours.' },
  mentions_24h: { unit: 'count', definition: 'Mentions of the token in the last 24 hours.' },
  unique_authors_15m: { unit: 'count', definition: 'Distinct authors who mentioned the token in the last 15 minutes.' },
  unique_authors_1h: { unit: 'count', definition: 'Distinct authors who mentioned the token in the last hour.' },
  unique_authors_6h: { unit: 'count', definition: 'Distinct authors who mentioned the token in the last 6 hours.' },
  unique_authors_24h: { unit: 'count', definition: 'Distinct authors who mentioned the token in the last 24 hours.' },
  mention_velocity_15m: {
    unit: 'ratio',
    definition: 'Hourly mention rate of the last 15 minutes over that of the last hour: mentions_15m * 4 / mentions_1h; null when mentions_1h is 0.',
  },
  mention_velocity_1h: {
    unit: 'ratio',
    definition: 'Mentions of the last hour over the hourly average of the last 24 hours: mentions_1h / (mentions_24h / 24); null when mentions_24h is 0.',
  },
  new_author_share_1h: {
    unit: 'fraction',
    definition: 'Share of the last hour\'s distinct authors who had never mentioned the token before that hour; null when there were none.',
  },
  quality_weighted_attention_1h: {
    unit: 'weighted_authors',
    definition: `Sum over the last hour's distinct authors of their research score / 100 as of b; an author without a score counts ${UNSCORED_AUTHOR_WEIGHT}.`,
  },
  engagement_1h: { unit: 'count', definition: 'Likes + replies + reposts of the posts behind the last hour\'s mentions, as first seen.' },
  engagement_24h: { unit: 'count', definition: 'Likes + replies + reposts of the posts behind the last 24 hours\' mentions, as first seen.' },
  price_usd: { unit: 'usd_per_token', definition: 'Price of the last market tick at or before b; null before any market data.' },
  price_change_15m: {
    unit: 'fraction',
    definition: 'price_usd over the last price at or before b - 15m, minus 1; null when there was no price that far back.',
  },
  price_change_1h: {
    unit: 'fraction',
    definition: 'price_usd over the last price at or before b - 1h, minus 1; null when there was no price that far back.',
  },
  price_change_24h: {
    unit: 'fraction',
    definition: 'price_usd over the last price at or before b - 24h, minus 1; null when there was no price that far back.',
  },
  volume_1h: { unit: 'usd', definition: 'Traded volume of the ticks in the last hour; null before any market data.' },
  volume_24h: { unit: 'usd', definition: 'Traded volume of the ticks in the last 24 hours; null before any market data.' },
  volume_acceleration: {
    unit: 'ratio',
    definition: 'volume_1h over the hourly average of the last 24 hours: volume_1h / (volume_24h / 24); null when volume_24h is 0 or unknown.',
  },
  liquidity_usd: { unit: 'usd', definition: 'Pool liquidity of the last tick at or before b; null before any market data.' },
  market_cap_usd: { unit: 'usd', definition: 'Market capitalisation of the last tick at or before b; null before any market data.' },
  trades_1h: { unit: 'count', definition: 'Trades in the ticks of the last hour; null before any market data.' },
  narrative_share: {
    unit: 'fraction',
    definition: 'Share of all token mentions in the last complete hour that went to the token\'s narrative; null before any.',
  },
  late_events_24h: {
    unit: 'count',
    definition: 'Ticks and mentions of the token that arrived in the last 24 hours (hourly steps) after a snapshot later than their own time had been emitted; applied from then on, never to past snapshots.',
  },
} as const satisfies Record<string, FeatureDefinition>;

export type FeatureName = keyof typeof FEATURE_DEFINITIONS;
export const FEATURE_NAMES = Object.keys(FEATURE_DEFINITIONS) as FeatureName[];
export type FeatureVector = Record<FeatureName, number | null>;
