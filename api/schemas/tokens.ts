import { z } from 'zod';
import { ANALOG_K_DEFAULT, ANALOG_K_MAX, ANALOG_MODEL_VERSION } from '../../processors/quant-engine/analogs/analogs.ts';
import { ANALOG_COMPONENTS } from '../../processors/quant-engine/analogs/vector.ts';
import { FEATURE_DEFINITIONS, FEATURE_NAMES, type FeatureName } from '../../processors/quant-engine/features/definitions.ts';
import { DIVERGENCE_STATE_RULE } from '../../processors/quant-engine/scores/models.ts';
import { MARKET_STALE_MS, SOCIAL_STALE_MS } from '../../processors/quant-engine/snapshots/snapshots.ts';
import { MAX_SCAN_LIMIT, MAX_SCAN_RULES } from '../../projections/read-models/scan.ts';
import { MAX_Q_LENGTH, MAX_TOKENS_LIMIT } from '../../projections/read-models/tokens.ts';
import { RULE_FIELDS, type RuleField } from '../../projections/tables/quant.ts';
import { CHAINS, DIVERGENCE_STATES, slug } from '../../schemas/records/primitives.ts';
import { QuantActivitySchema, QuantMarketSchema, QuantScoreDetailSchema } from '../../schemas/records/quant-scores.ts';
import { parseTokenRef } from '../../schemas/token-ref.ts';
import { SCAN_DEFAULT_LIMIT, SCAN_DEFAULT_SORT, SCAN_DEFAULT_SORT_DIR, SCAN_PRESET_NAMES, SCAN_PRESETS } from '../scan-presets.ts';
import { asOfField, asOfParam, disclaimer, isoTime, listOf, named, resourceHeader } from './common.ts';
import { HEALTH_STALE_AFTER_MS } from './meta.ts';
import { AnalogSummary, Scores } from './signals.ts';
import { TokenSchema } from './token.ts';

/**
 * The token endpoints (spec 4.1): the token reference, the quant snapshot, analogs, the
 * token list and the scanner. Values are the stored snapshot's, renamed; times are ISO.
 */

const RULE_FIELD_ENUM = RULE_FIELDS as readonly RuleField[] as [RuleField, ...RuleField[]];
const ruleField = z.enum(RULE_FIELD_ENUM);
const sortDir = z.enum(['asc', 'desc']);

// ---- inputs ----

/** A token reference (spec 2.3), checked for its form; whether it names a token is the read model's answer. */
export const TokenRefSchema = z
  .string()
  .superRefine((text, ctx) => {
    const parsed = parseTokenRef(text);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error });
  })
  .describe(
    'Token reference: `$SYMBOL` or `SYMBOL` (case-insensitive), `tk_<id>`, `<chain>:<address>` or `<address>`. A symbol (or an ' +
      'address on several chains) shared by several tokens names the most active: most mentions in the 24 hours up to its ' +
      'latest snapshot (`mentions_24h`), ties to the smallest token id.',
  );

export const TokenParamsSchema = z.strictObject({ token: TokenRefSchema });

export const TokenSnapshotQuerySchema = z.strictObject({ as_of: asOfParam });

export const AnalogsQuerySchema = z.strictObject({
  k: z.coerce
    .number()
    .int()
    .min(1)
    .max(ANALOG_K_MAX)
    .default(ANALOG_K_DEFAULT)
    .describe(`Most analogs to return, nearest first: 1 to ${ANALOG_K_MAX}.`),
  as_of: asOfParam,
});

export const TokensQuerySchema = z.strictObject({
  sort: ruleField.default('momentum').describe('Rule field to sort by (a score or a feature); tokens where it is null come last.'),
  dir: sortDir.default('desc'),
  limit: z.coerce.number().int().min(1).max(MAX_TOKENS_LIMIT).default(25),
  cursor: z
    .string()
    .min(1)
    .optional()
    .describe(
      "`next_cursor` of the previous page of the same query (sort, dir and filters). It carries the first page's `as_of`: send it " +
        'without `as_of`, or with that same one (another answers 400 VALIDATION).',
    ),
  narrative: slug.optional().describe("Only tokens of this narrative (slug), as of their latest snapshot."),
  chain: z.enum(CHAINS).optional(),
  q: z
    .string()
    .max(MAX_Q_LENGTH)
    .optional()
    .describe(`Case-insensitive substring of the symbol or the name, at most ${MAX_Q_LENGTH} characters.`),
  as_of: asOfParam,
});

export const ScanRuleSchema = named(
  'ScanRule',
  z.strictObject({
    field: ruleField.describe('A rule field: a score name or a feature name (GET /v1/models lists the features and their units).'),
    op: z.enum(['>', '>=', '<', '<=']),
    value: z.number().describe('Threshold. Percentages are fractions: 0.05 means 5%.'),
  }),
  'A scanner rule (spec 2.6): passes when the field compares true with the value; a null field never passes.',
);

/** The presets as Markdown, for the scan operation's description. */
export const SCAN_PRESET_TABLE = [
  '| preset | rules (AND) | default sort | what it finds |',
  '|---|---|---|---|',
  ...SCAN_PRESET_NAMES.map((name) => {
    const p = SCAN_PRESETS[name];
    const rules = p.rules.map((r) => `\`${r.field} ${r.op} ${r.value}\``).join(', ');
    return `| \`${name}\` | ${rules} | \`${p.sort}\` ${p.sortDir} | ${p.description} |`;
  }),
].join('\n');

export const ScanBodySchema = z
  .strictObject({
    preset: z.enum(SCAN_PRESET_NAMES).optional().describe('A named rule set with its default sort; the operation lists them.'),
    rules: z
      .array(ScanRuleSchema)
      .max(MAX_SCAN_RULES)
      .optional()
      .describe(`At most ${MAX_SCAN_RULES} rules; all must pass (AND), together with the preset's rules when a preset is given.`),
    sort: ruleField.optional().describe(`Rule field to sort by; default the preset's sort, or ${SCAN_DEFAULT_SORT} without a preset.`),
    sort_dir: sortDir.optional().describe(`Default the preset's direction, or ${SCAN_DEFAULT_SORT_DIR} without a preset. Nulls sort last either way.`),
    limit: z.number().int().min(1).max(MAX_SCAN_LIMIT).default(SCAN_DEFAULT_LIMIT).describe(`Rows returned, 1 to ${MAX_SCAN_LIMIT}.`),
    chains: z.array(z.enum(CHAINS)).min(1).optional().describe('Only tokens on these chains.'),
    narrative: slug.optional().describe('Only tokens of this narrative (slug).'),
    as_of: asOfParam,
  })
  .refine((body) => body.preset !== undefined || (body.rules !== undefined && body.rules.length > 0), {
    message: 'send a preset, at least one rule, or both',
  });

// ---- outputs ----

const ScoreDetail = named(
  'ScoreDetail',
  QuantScoreDetailSchema,
  'One score with its explanation: `value` (0–100, or null when a required input is unavailable); `drivers`, named inputs whose ' +
    '`contribution`s (points) sum exactly to `value` (none when null); `confidence` HIGH, MEDIUM or LOW; `reason`, why confidence ' +
    'is below HIGH or why the value is null (null otherwise); `model_version`, `<score>@<version>`. GET /v1/models documents each model.',
);

const ActiveSignal = named(
  'ActiveSignal',
  z.strictObject({
    id: z.string().describe('Signal id, `sig_<hex>`; GET /v1/quant/signals/{id} has its detail.'),
    type: z.string().describe('Signal type, e.g. `EARLY_ACCELERATION`.'),
    ruleVersion: z.string().describe('`<rule_name>@<version>`.'),
    firedAt: isoTime,
    strength: z.number().describe('0–100: how far past their thresholds the conditions were at fire time.'),
  }),
  'A signal active on the token at the snapshot time.',
);

const Market = named(
  'Market',
  QuantMarketSchema,
  'Market data at the snapshot time: price (USD), price changes over 15 min, 1 h and 24 h (fractions, 0.05 = 5%), traded volume ' +
    'over 1 h and 24 h (USD), volume acceleration (the last hour over the hourly average of 24 h; 1 = unchanged), pool liquidity ' +
    'and market cap (USD), trades in the hour. Null where not available (no market data yet, or not enough history).',
);

const Activity = named(
  'Activity',
  QuantActivitySchema,
  'Social activity at the snapshot time: mentions and distinct authors over 1 h and 24 h, mention velocities (the rate of the ' +
    'last 15 min over the last hour, the last hour over the hourly average of 24 h; 1 = unchanged), the share of the hour\'s ' +
    'authors new to the token (fraction), quality-weighted attention (sum of author research scores / 100), engagement (likes + ' +
    'replies + reposts). Null where not defined (e.g. a velocity without mentions to compare with).',
);

const divergenceState = z.enum(DIVERGENCE_STATES).describe(DIVERGENCE_STATE_RULE);

const Freshness = named(
  'Freshness',
  z.strictObject({
    updatedAt: isoTime.describe('Time of the snapshot: it is built from events up to this time.'),
    sourceLastEventAt: isoTime.nullable().describe('Time of the last social-activity event of the token by then; null before any.'),
    marketLastAt: isoTime.nullable().describe('Time of the last market data of the token by then; null before any.'),
    sourceLagMs: z.number().int().min(0).nullable().describe('updated_at − source_last_event_at, in milliseconds; null before any social activity.'),
    marketLagMs: z.number().int().min(0).nullable().describe('updated_at − market_last_at, in milliseconds; null before any market data.'),
    ageMs: z
      .number()
      .int()
      .describe('Computed when the request is answered: the service clock (or the `as_of` asked) minus updated_at, in milliseconds.'),
    stale: z.boolean().describe('True when stale_reasons is not empty.'),
    staleReasons: z
      .array(z.string())
      .describe(
        `Why the data may be out of date. As of updated_at, from the snapshot: no social activity yet, or the last older than ` +
          `${SOCIAL_STALE_MS / 3_600_000} h; no market data yet, or the last older than ${MARKET_STALE_MS / 60_000} min. ` +
          `Added when the request is answered: the snapshot itself older than ${HEALTH_STALE_AFTER_MS.snapshots / 60_000} min (age_ms), with its age.`,
      ),
  }),
  'How fresh a quant snapshot is (spec 2.2). Lags are in milliseconds.',
);

const SNAPSHOT_FEATURES = z
  .record(z.string(), z.number().nullable())
  .describe(
    'The feature vector by feature name, as the feature model in `model_versions.features` produced it (GET /v1/models defines ' +
      'each feature and its unit); null where a feature is not available. These names and the score names are the rule fields.',
  );

export const TokenSnapshotSchema = named(
  'TokenSnapshot',
  z.strictObject({
    ...resourceHeader('token_snapshot'),
    id: z.string().describe('Snapshot id, `snap_<hex>`; analogs name the historical snapshots they come from by this id.'),
    token: TokenSchema,
    ts: isoTime.describe('Snapshot time: every value is as of this time, from events at or before it.'),
    scores: Scores,
    scoreDetails: z.array(ScoreDetail).describe('One per score: its drivers, confidence, reason and model version.'),
    activeSignals: z.array(ActiveSignal),
    market: Market,
    activity: Activity,
    divergenceState,
    features: SNAPSHOT_FEATURES,
    analogs: AnalogSummary.describe(
      `Summary of the ${ANALOG_K_DEFAULT} nearest analogs of this snapshot (${ANALOG_MODEL_VERSION}), computed when the request is ` +
        'answered over the candidates whose 24 h outcome resolved at or before the snapshot time: what GET /v1/quant/token/{token}/analogs ' +
        `returns as \`summary\` at k = ${ANALOG_K_DEFAULT}.`,
    ),
    modelVersions: z.record(z.string(), z.string()).describe('Versions of the models that produced the snapshot: each score, the features and the analogs.'),
    freshness: Freshness,
    asOf: asOfField.unwrap().describe('The time this answer is for: the `as_of` asked, or without it the snapshot time `ts`.'),
    disclaimer,
  }),
  'The latest point-in-time quant snapshot of a token (spec 2.3).',
);

const AnalogSchema = named(
  'Analog',
  z.strictObject({
    snapshotId: z.string().describe('The historical snapshot, `snap_<hex>`.'),
    tokenId: z.string().describe('Its token, `tk_<id>`.'),
    token: TokenSchema.nullable().describe('The token; null only while its metadata has not yet reached the store.'),
    ts: isoTime.describe('Time of the historical snapshot.'),
    distance: z
      .number()
      .min(0)
      .describe(`Euclidean distance between the standardised vectors (${ANALOG_COMPONENTS.join(', ')}); 0 is identical.`),
    return24h: z.number().nullable().describe('Price 24 h after the historical snapshot over its price, minus 1 (fraction); null when no price was seen.'),
    maxDrawdown24h: z.number().max(0).nullable().describe('Lowest price within those 24 h over the entry price, minus 1 (fraction, ≤ 0); null when no price was seen.'),
  }),
  'A historical setup similar to the query snapshot, with what happened over the next 24 hours.',
);

export const TokenAnalogsSchema = named(
  'TokenAnalogs',
  z.strictObject({
    ...resourceHeader('analogs'),
    modelVersion: z.literal(ANALOG_MODEL_VERSION),
    token: TokenSchema,
    snapshotId: z.string().describe('The query: the latest snapshot of the token.'),
    snapshotTs: isoTime.describe('Its time. Only candidates whose 24 h outcome resolved at or before it are used; the same token within ±24 h of it is excluded.'),
    k: z.number().int().min(1).max(ANALOG_K_MAX).describe('Most analogs asked for; `data` has fewer when fewer candidates qualify.'),
    summary: AnalogSummary.describe('Over the analogs in `data`.'),
    data: z.array(AnalogSchema).describe('Nearest first; equal distances in snapshot id order.'),
    asOf: asOfField.unwrap().describe('The time this answer is for: the `as_of` asked, or without it the query snapshot time.'),
    disclaimer,
  }),
  `Historical snapshots most similar to a token's latest snapshot (${ANALOG_MODEL_VERSION}).`,
);

const featureFields = Object.fromEntries(
  FEATURE_NAMES.map((name) => [name, z.number().nullable().describe(`${FEATURE_DEFINITIONS[name].definition} Unit: ${FEATURE_DEFINITIONS[name].unit}.`)]),
) as Record<FeatureName, z.ZodNullable<z.ZodNumber>>;

export const TokenScoreSchema = named(
  'TokenScore',
  z.strictObject({
    ...resourceHeader('token_score'),
    tokenId: z.string().describe('The token, `tk_<id>`.'),
    token: TokenSchema.nullable().describe('The token; null only while its metadata has not yet reached the store.'),
    ts: isoTime.describe('Time of the snapshot the values come from.'),
    scores: Scores,
    divergenceState,
    features: z.strictObject(featureFields).describe('Every feature of the snapshot; null where not available.'),
  }),
  "A token's rule fields (scores and features) at one snapshot: a row of the token list and of the scanner.",
);

export const TokenListSchema = listOf('TokenList', TokenScoreSchema, { asOf: true });

export const ScanResultSchema = named(
  'ScanResult',
  z.strictObject({
    ...resourceHeader('scan'),
    preset: z.enum(SCAN_PRESET_NAMES).nullable().describe('The preset applied; null without one.'),
    rules: z.array(ScanRuleSchema).describe("The rules applied: the preset's, then the body's."),
    sort: ruleField,
    sortDir: sortDir,
    limit: z.number().int(),
    chains: z.array(z.enum(CHAINS)).nullable().describe('The chains scanned; null for all.'),
    narrative: z.string().nullable().describe('The narrative scanned; null for all.'),
    asOf: asOfField.describe(
      "The scan saw each token's latest snapshot at or before this time: the `as_of` asked, or the newest time up to which every " +
        'snapshot is stored (on the Free plan at most the time of the request minus `delayed_minutes`); null before any data.',
    ),
    delayedMinutes: z.number().int().min(0).describe("How far behind the live snapshots the key's plan scans: 0, or 15 on the Free plan."),
    count: z.number().int().min(0).describe('Rows in `data`.'),
    data: z.array(TokenScoreSchema).describe('Tokens passing every rule, in the sort order; nulls last.'),
  }),
  'The tokens whose latest snapshot passes every rule (spec 4.1).',
);
