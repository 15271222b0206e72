import { loadRuleSet, type SignalRule } from './rule-language.ts';

/**
 * The signal rules, as data: evaluated by signals.ts and served as documentation by
 * GET /v1/models. Thresholds are set for the feature scales of a world of about 500 tokens
 * and 3,000 authors, where a token in accumulation sees one or two mentions an hour and a
 * breakout a handful to a few dozen. Change a threshold by bumping the rule's version.
 */
export const SIGNAL_RULES: readonly SignalRule[] = [
  {
    name: 'early_acceleration',
    version: '1',
    type: 'EARLY_ACCELERATION',
    label: 'Early acceleration',
    description:
      'Attention from few but well-rated authors is accelerating before the crowd arrives and before the price has moved much: ' +
      'quality-weighted attention of at least 1.5, mentions at 2.5x their daily hourly average, no more than 6 authors, ' +
      'price up at most 8% in the hour and between 0% and 60% over the day, volume not yet surging.',
    conditions: [
      { field: 'quality_weighted_attention_1h', op: '>=', value: 1.5 },
      { field: 'mention_velocity_1h', op: '>=', value: 2.5 },
      { field: 'unique_authors_1h', op: '<=', value: 6 },
      { field: 'price_change_1h', op: '<=', value: 0.08 },
      { field: 'price_change_24h', op: '>=', value: 0 },
      { field: 'price_change_24h', op: '<=', value: 0.6 },
      { field: 'volume_acceleration', op: '<=', value: 3 },
    ],
    end: { lapseMinutes: 60, maxAgeMinutes: 6 * 60 },
    cooldownMinutes: 2 * 60,
  },
  {
    name: 'broad_attention',
    // Stays: a warning that the crowd has arrived. Its event study shows returns below the
    // baseline (24 h: 22% and 29% positive, median -26% and -24%, seeds 7 and 11).
    version: '1',
    type: 'BROAD_ATTENTION',
    label: 'Broad attention',
    description:
      'Many distinct authors, most of them new to the token, talk about it: at least 10 authors in the hour, ' +
      'at least 80% of them new to it, and at least 50 authors over the day.',
    conditions: [
      { field: 'unique_authors_1h', op: '>=', value: 10 },
      { field: 'new_author_share_1h', op: '>=', value: 0.8 },
      { field: 'unique_authors_24h', op: '>=', value: 50 },
    ],
    end: { lapseMinutes: 60, maxAgeMinutes: 12 * 60 },
    cooldownMinutes: 3 * 60,
  },
  {
    name: 'velocity_3x',
    // Stays as it is: a raw attention alert with no price edge of its own (event study at 24 h
    // on seeds 7 and 11: 49% and 50% positive against 53% and 57%); it says that a token is
    // being talked about, not that it will rise, and the edge lives in the rules built on it.
    version: '1',
    type: 'VELOCITY_3X',
    label: 'Mention velocity 3x',
    description: "The last hour's mentions are at least three times the hourly average of the last 24 hours, on at least 4 mentions.",
    conditions: [
      { field: 'mention_velocity_1h', op: '>=', value: 3 },
      { field: 'mentions_1h', op: '>=', value: 4 },
    ],
    end: { lapseMinutes: 30, maxAgeMinutes: 3 * 60 },
    cooldownMinutes: 60,
  },
  {
    name: 'hq_authors_converge',
    // Version 2 adds the price conditions. Version 1 fired mostly after the move: its event
    // study over simulated history showed no edge at 24 h (39% and 42% positive, median -10%
    // and -7%, on seeds 7 and 11, against 53% and 57% for all token-times).
    version: '2',
    type: 'HQ_AUTHORS_CONVERGE',
    label: 'High-quality authors converge',
    description:
      'Several authors with strong research scores mention the token within the hour, before the price has run: ' +
      'quality-weighted attention of at least 2 from at least 3 authors, price up at most 8% in the hour and between 0% and 60% over the day.',
    conditions: [
      { field: 'quality_weighted_attention_1h', op: '>=', value: 2 },
      { field: 'unique_authors_1h', op: '>=', value: 3 },
      { field: 'price_change_1h', op: '<=', value: 0.08 },
      { field: 'price_change_24h', op: '>=', value: 0 },
      { field: 'price_change_24h', op: '<=', value: 0.6 },
    ],
    end: { lapseMinutes: 60, maxAgeMinutes: 6 * 60 },
    cooldownMinutes: 2 * 60,
  },
  {
    name: 'social_up_price_flat',
    // Version 2 asks the price to be flat over the day too. Version 1 let in tokens that had
    // already run earlier in the day and paused for an hour: no edge at 24 h (45% and 48%
    // positive, median -4% and -1%, on seeds 7 and 11, against 53% and 57%).
    version: '2',
    type: 'SOCIAL_UP_PRICE_FLAT',
    label: 'Social up, price flat',
    description:
      'Mentions run at 2.5x their daily hourly average (at least 4 in the hour) while the price moved less than 3% either way in the hour ' +
      'and between -10% and +20% over the day.',
    conditions: [
      { field: 'mention_velocity_1h', op: '>=', value: 2.5 },
      { field: 'mentions_1h', op: '>=', value: 4 },
      { field: 'price_change_1h', op: '>=', value: -0.03 },
      { field: 'price_change_1h', op: '<=', value: 0.03 },
      { field: 'price_change_24h', op: '>=', value: -0.1 },
      { field: 'price_change_24h', op: '<=', value: 0.2 },
    ],
    end: { lapseMinutes: 30, maxAgeMinutes: 4 * 60 },
    cooldownMinutes: 2 * 60,
  },
  {
    name: 'crowding_spike',
    // Stays: a warning, not an entry. Its event study shows the crowd arriving late (24 h: 30%
    // and 38% positive, median -13% and -4%, seeds 7 and 11), which is what it flags.
    version: '1',
    type: 'CROWDING_SPIKE',
    label: 'Crowding spike',
    description:
      'A sudden pile-in of new voices: at least 4 mentions in 15 minutes at 2.5x the hourly rate, at least 80% of the hour\'s authors new to the token, ' +
      'and at least 2 more authors in the hour than at the previous snapshot.',
    conditions: [
      { field: 'mentions_15m', op: '>=', value: 4 },
      { field: 'mention_velocity_15m', op: '>=', value: 2.5 },
      { field: 'new_author_share_1h', op: '>=', value: 0.8 },
      { field: 'unique_authors_1h', op: '>=', value: 2, measure: 'change' },
    ],
    end: { lapseMinutes: 30, maxAgeMinutes: 3 * 60 },
    cooldownMinutes: 3 * 60,
  },
  {
    name: 'cooling',
    // Stays: an exit signal. Its event study shows the fading that it flags (24 h: 12% and 13%
    // positive, median -24% and -37%, seeds 7 and 11).
    version: '1',
    type: 'COOLING',
    label: 'Cooling',
    description:
      'A token that was talked about fades: at least 60 mentions over the day, but the last hour runs at half the daily hourly average or less, and the price fell at least 2% in the hour.',
    conditions: [
      { field: 'mentions_24h', op: '>=', value: 60 },
      { field: 'mention_velocity_1h', op: '<=', value: 0.5 },
      { field: 'price_change_1h', op: '<=', value: -0.02 },
    ],
    end: { lapseMinutes: 60, maxAgeMinutes: 12 * 60 },
    cooldownMinutes: 6 * 60,
  },
];

/** Checked at module load: a bad rule stops start-up. */
export const DEFAULT_RULE_SET = loadRuleSet(SIGNAL_RULES);

/** The signal type behind each event-study slug (spec 2.9). */
export const EVENT_STUDY_SIGNALS = {
  'velocity-3x': 'VELOCITY_3X',
  'hq-authors-converge': 'HQ_AUTHORS_CONVERGE',
  'social-up-price-flat': 'SOCIAL_UP_PRICE_FLAT',
  'crowding-spike': 'CROWDING_SPIKE',
  'broad-attention': 'BROAD_ATTENTION',
  cooling: 'COOLING',
} as const satisfies Record<string, string>;
export type EventStudySlug = keyof typeof EVENT_STUDY_SIGNALS;

/** Rule documentation for GET /v1/models. */
export interface SignalRuleDoc {
  type: string;
  label: string;
  ruleVersion: string;
  description: string;
  conditions: { field: string; op: string; value: number; measure: 'value' | 'change' }[];
  end: string;
  cooldownMinutes: number;
}

export function signalRuleDocs(): SignalRuleDoc[] {
  return DEFAULT_RULE_SET.rules.map((r) => ({
    type: r.type,
    label: r.label,
    ruleVersion: r.ruleVersion,
    description: r.description,
    conditions: r.conditions.map((c) => ({ field: c.field, op: c.op, value: c.value, measure: c.measure ?? 'value' })),
    end:
      `Ends ${r.end.lapseMinutes} minutes of event time after the last snapshot of the token on which all conditions held, ` +
      `or ${r.end.maxAgeMinutes} minutes after it fired, whichever comes first.`,
    cooldownMinutes: r.cooldownMinutes,
  }));
}
