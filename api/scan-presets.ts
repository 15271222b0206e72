import type { RuleField } from '../projections/tables/quant.ts';
import type { ScanRule } from '../projections/read-models/scan.ts';
import type { SortDir } from '../projections/read-models/cursor.ts';

/**
 * The scanner presets of spec 4.1, as data: each a rule set over rule fields (scores 0–100
 * and the features of processors/quant-engine/features/definitions.ts; fractions as
 * fractions) and the sort it defaults to. POST /v1/quant/scan ANDs a preset's rules with the
 * body's and publishes this table in the OpenAPI document. Thresholds read against the
 * score models (scores/models.ts): e.g. momentum 30 is about +5% in the hour with volume or
 * mentions somewhat above their hourly average; a velocity of 1.5 is 1.5x the daily hourly rate.
 */

export const SCAN_PRESET_NAMES = [
  'early-attention',
  'broad-momentum',
  'high-conviction',
  'low-crowding',
  'smart-cohort',
  'cooling-fast',
  'narrative-breakout',
] as const;
export type ScanPresetName = (typeof SCAN_PRESET_NAMES)[number];

export interface ScanPreset {
  description: string;
  rules: readonly (ScanRule & { field: RuleField })[];
  sort: RuleField;
  sortDir: SortDir;
}

export const SCAN_PRESETS: Readonly<Record<ScanPresetName, ScanPreset>> = {
  // The EARLY_ACCELERATION signal's idea as a filter: quality first, before the crowd.
  'early-attention': {
    description: 'Well-rated authors are starting to talk about a token the crowd has not found yet.',
    rules: [
      { field: 'early_quality', op: '>=', value: 50 },
      { field: 'mention_velocity_1h', op: '>=', value: 1.5 },
      { field: 'unique_authors_24h', op: '<=', value: 25 },
    ],
    sort: 'early_quality',
    sortDir: 'desc',
  },
  'broad-momentum': {
    description: 'Price, volume and attention rise together, carried by more than a handful of voices.',
    rules: [
      { field: 'momentum', op: '>=', value: 30 },
      { field: 'price_change_1h', op: '>', value: 0 },
      { field: 'unique_authors_1h', op: '>=', value: 3 },
    ],
    sort: 'momentum',
    sortDir: 'desc',
  },
  'high-conviction': {
    description: 'Credible, committed attention from more than a few authors.',
    rules: [
      { field: 'conviction', op: '>=', value: 50 },
      { field: 'unique_authors_24h', op: '>=', value: 5 },
    ],
    sort: 'conviction',
    sortDir: 'desc',
  },
  'low-crowding': {
    description: 'Moving before the crowd has piled in; least crowded first.',
    rules: [
      { field: 'momentum', op: '>=', value: 25 },
      { field: 'crowding', op: '<=', value: 30 },
    ],
    sort: 'crowding',
    sortDir: 'asc',
  },
  'smart-cohort': {
    description: 'The top-research cohort (cohort_top-research) is talking about the token.',
    rules: [{ field: 'smart_cohort', op: '>=', value: 30 }],
    sort: 'smart_cohort',
    sortDir: 'desc',
  },
  // The COOLING signal, looser (20 mentions a day, price merely not up) to list fading tokens sooner.
  'cooling-fast': {
    description: 'A token that was talked about is going quiet, its price not rising; fastest fading first.',
    rules: [
      { field: 'mentions_24h', op: '>=', value: 20 },
      { field: 'mention_velocity_1h', op: '<=', value: 0.5 },
      { field: 'price_change_1h', op: '<=', value: 0 },
    ],
    sort: 'mention_velocity_1h',
    sortDir: 'asc',
  },
  'narrative-breakout': {
    description: "The token's narrative is gaining attention share and the token's own mentions accelerate with it.",
    rules: [
      { field: 'narrative_velocity', op: '>=', value: 60 },
      { field: 'mention_velocity_1h', op: '>=', value: 1.5 },
    ],
    sort: 'narrative_velocity',
    sortDir: 'desc',
  },
};

/** Without a preset the scan sorts by momentum, highest first. */
export const SCAN_DEFAULT_SORT: RuleField = 'momentum';
export const SCAN_DEFAULT_SORT_DIR: SortDir = 'desc';
export const SCAN_DEFAULT_LIMIT = 50;
