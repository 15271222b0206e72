import { z } from 'zod';
import { CONFIDENCE_RULES } from '../../processors/quant-engine/analogs/analogs.ts';
import { ANALOG_DIMS } from '../../processors/quant-engine/analogs/vector.ts';
import { SIGNAL_RULES } from '../../processors/quant-engine/signals/rules.ts';
import { MAX_SIGNALS_LIMIT, MAX_PRIOR_FIRINGS } from '../../projections/read-models/signals.ts';
import { AnalogSummarySchema, CHAINS, SCORE_NAMES, type ScoreName } from '../../schemas/records/primitives.ts';
import { QuantScoresSchema } from '../../schemas/records/quant-scores.ts';
import { SIGNAL_END_REASONS, SIGNAL_STATUSES, SignalConditionSchema } from '../../schemas/records/quant-signals.ts';
import { parseTokenRef } from '../../schemas/token-ref.ts';
import { asOfField, asOfParam, disclaimer, isoTime, listOf, named, resourceHeader, timeParam } from './common.ts';
import { TokenSchema } from './token.ts';

/**
 * The signal feed and signal detail (spec 2.4, 4.2): query parameters, the signal object
 * and the detail's extras. Signal types are the rules' types (processors/quant-engine/signals/rules.ts).
 */

const SIGNAL_TYPES = SIGNAL_RULES.map((r) => r.type) as [string, ...string[]];
const TYPE_LIST = SIGNAL_TYPES.join(', ');

/** A share of the analog vector's components as a fraction of them, e.g. 1/7. */
const ofDims = (share: number) => `${Math.round(share * ANALOG_DIMS)}/${ANALOG_DIMS}`;

export const AnalogSummary = named(
  'AnalogSummary',
  AnalogSummarySchema,
  'Outcomes of the historical setups most similar to a snapshot (model analog-v1.0), 24 h after each: `n` analogs; ' +
    '`median_24h` their median 24 h return and `worst_drawdown_24h` their worst drawdown within 24 h (fractions, 0.05 = 5%; ' +
    'the drawdown is ≤ 0); `positive_share` the share of analogs with a positive return. `confidence`: gap is the mean ' +
    'distance to the analogs per component in standard deviations, imputed the share of missing vector components; ' +
    `HIGH when n ≥ ${CONFIDENCE_RULES.highMinN}, gap ≤ ${CONFIDENCE_RULES.highMaxGap} and imputed ≤ ${ofDims(CONFIDENCE_RULES.highMaxImputed)}; ` +
    `LOW when n < ${CONFIDENCE_RULES.lowBelowN}, gap > ${CONFIDENCE_RULES.lowAboveGap} or imputed > ${ofDims(CONFIDENCE_RULES.lowAboveImputed)}; MEDIUM otherwise. ` +
    'A field is null when no analog has that outcome.',
);

export const Scores = named(
  'Scores',
  QuantScoresSchema,
  `The seven scores (${SCORE_NAMES.join(', ')}), each 0–100; null where the data was insufficient to compute it (never zero for missing data).`,
);

const SignalCondition = named(
  'SignalCondition',
  SignalConditionSchema,
  'One condition of the rule as it held at fire time: `actual` compared with `threshold` by `op`. `measure` is `value` ' +
    '(the field itself) or `change` (its change since the previous snapshot of the token). Fractions are fractions (0.05 = 5%).',
);

const signalFields = {
  ...resourceHeader('signal'),
  id: z.string().regex(/^sig_[0-9a-f]+$/).describe('Signal id, `sig_<hex>`.'),
  type: z.enum(SIGNAL_TYPES).describe(`Signal type, one of the rules' types: ${TYPE_LIST}.`),
  label: z.string().describe('Human label of the type.'),
  ruleVersion: z.string().describe('`<rule_name>@<version>` of the rule that fired.'),
  status: z.enum(SIGNAL_STATUSES),
  firedAt: isoTime,
  endedAt: isoTime.nullable().describe('Null while active.'),
  endReason: z
    .enum(SIGNAL_END_REASONS)
    .nullable()
    .describe(
      'Why it ended; null while active. `conditions_lapsed`: the conditions were not seen holding for the rule\'s lapse time; `max_age`: the rule\'s maximum age passed.',
    ),
  strength: z.number().min(0).max(100).describe('0–100: how far past their thresholds the conditions were at fire time, averaged over the conditions.'),
};

/** The compact form of a signal in the prior firings of the detail. */
export const SignalFiringSchema = named(
  'SignalFiring',
  z.strictObject(signalFields),
  'A signal without its scores, reasons, analogs and token: one earlier firing of the same rule on the same token.',
);

export const SignalSchema = named(
  'Signal',
  z.strictObject({
    ...signalFields,
    scores: Scores.describe('Scores of the token at fire time.'),
    why: z.array(z.string()).describe('Human-readable reasons: each condition that held, with its value.'),
    analogs: AnalogSummary.nullable().describe('Analog summary at fire time; null when no analog with a resolved 24 h outcome existed then.'),
    token: TokenSchema.nullable().describe('The token; null only while its metadata has not yet reached the store.'),
    disclaimer,
  }),
  'A signal: an alert fired when a rule matched a token snapshot.',
);

export const SignalListSchema = listOf('SignalList', SignalSchema, { asOf: true });

export const SignalRuleDocSchema = named(
  'SignalRuleDoc',
  z.strictObject({
    type: z.string(),
    label: z.string(),
    ruleVersion: z.string().describe('`<rule_name>@<version>`.'),
    description: z.string(),
    conditions: z
      .array(
        z.strictObject({
          field: z.string().describe('A rule field (score or feature name).'),
          op: z.string().describe('One of >, >=, <, <=.'),
          value: z.number().describe('The threshold.'),
          measure: z.enum(['value', 'change']).describe('`value`: the field itself; `change`: its change since the previous snapshot.'),
        }),
      )
      .describe('All must hold for the rule to fire.'),
    end: z.string().describe('What ends a signal of this rule.'),
    cooldownMinutes: z.number().int().min(0).describe('Minimum event time between two firings of the rule on one token.'),
  }),
  'Documentation of a signal rule.',
);

export const SignalDetailSchema = named(
  'SignalDetail',
  z.strictObject({
    ...SignalSchema.shape,
    conditions: z.array(SignalCondition).describe('Each condition of the rule: threshold against the actual value at fire time.'),
    features: z
      .record(z.string(), z.number().nullable())
      .describe('The feature vector of the snapshot the signal fired on, by feature name; null where a feature was not available.'),
    priorFirings: z.strictObject({
      count: z
        .number()
        .int()
        .min(0)
        .describe('Firings of the same rule on the same token before this one, as counted when it fired.'),
      data: z
        .array(SignalFiringSchema)
        .describe(`Those earlier firings of the same rule version, newest first, at most ${MAX_PRIOR_FIRINGS}.`),
    }),
    rule: SignalRuleDocSchema.nullable().describe('The rule that fired; null when that rule version is no longer served.'),
    asOf: asOfField.unwrap().describe(
      'The time this answer is for: the `as_of` asked (the signal and its prior firings with their status then), or without it the newest ' +
        'firing or end among them.',
    ),
  }),
  'One signal with the conditions that held, the feature snapshot at fire time, its analog summary, prior firings and the rule.',
);

// ---- query parameters ----

/** `<score>:<value>`, e.g. `momentum:60`. */
const minScore = z
  .string()
  .transform((text, ctx): { score: ScoreName; value: number } => {
    const colon = text.indexOf(':');
    const score = text.slice(0, colon);
    const value = colon < 0 ? NaN : Number(text.slice(colon + 1));
    if (colon < 0 || !(SCORE_NAMES as readonly string[]).includes(score) || text.slice(colon + 1).trim() === '' || !Number.isFinite(value)) {
      ctx.addIssue({ code: 'custom', message: `expected <score>:<number> with score one of ${SCORE_NAMES.join(', ')}` });
      return z.NEVER;
    }
    return { score: score as ScoreName, value };
  })
  .describe(`Minimum score at fire time, \`<score>:<value>\` (e.g. \`momentum:60\`); score one of ${SCORE_NAMES.join(', ')}. Signals whose score was null at fire time never pass.`);

/** A comma-separated list of values of `values`, each checked. */
function commaList<const T extends string>(values: readonly [T, ...T[]], what: string) {
  return z
    .string()
    .transform((text) => text.split(',').map((s) => s.trim()))
    .pipe(z.array(z.enum(values)).min(1))
    .describe(`Comma-separated ${what}, any of: ${values.join(', ')}.`);
}

const usdMinimum = (what: string) =>
  z.coerce.number().min(0).optional().describe(`Minimum ${what} at fire time, USD. Signals whose ${what} was unknown at fire time never pass.`);

export const SignalFeedQuerySchema = z.strictObject({
  min_score: minScore.optional(),
  signal_type: commaList(SIGNAL_TYPES, 'signal types').optional(),
  chain: commaList(CHAINS, 'chains').optional(),
  market_cap: usdMinimum('market cap'),
  liquidity: usdMinimum('liquidity'),
  created_after: timeParam
    .optional()
    .describe(
      'Signals fired strictly after this time: ISO-8601 with an offset (`2026-01-31T12:00:00Z`), or unix time: a number below 10^11 is seconds, larger ones milliseconds.',
    ),
  status: z.enum(['active', 'ended', 'all']).default('all'),
  token: z
    .string()
    .superRefine((text, ctx) => {
      const parsed = parseTokenRef(text);
      if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
    })
    .optional()
    .describe('Only signals on this token: `$SYMBOL`, `SYMBOL`, `tk_<id>`, `<chain>:<address>` or `<address>`. An unknown token answers 404.'),
  limit: z.coerce.number().int().min(1).max(MAX_SIGNALS_LIMIT).default(25),
  cursor: z
    .string()
    .min(1)
    .optional()
    .describe('`next_cursor` of the previous page of the same query. It carries the first page\'s `as_of`: send it without `as_of`, or with that same one.'),
  as_of: asOfParam,
});

export const SignalDetailQuerySchema = z.strictObject({ as_of: asOfParam });

export const SignalIdParamsSchema = z.strictObject({
  id: z.string().regex(/^sig_[0-9a-f]+$/, 'must be sig_<hex>').describe('Signal id, `sig_<hex>`.'),
});
