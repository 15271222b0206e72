import { SCORE_NAMES, type ScoreName, type ScoredSnapshot } from '../contracts.ts';
import { FEATURE_DEFINITIONS, FEATURE_NAMES, type FeatureName, type FeatureUnit } from '../features/definitions.ts';

/**
 * The signal rule language: a rule is data (name, version, conditions, end rule, cooldown)
 * so that GET /v1/models can serve it as documentation and a rule set can be checked at load.
 * Conditions are ANDed; a null value never satisfies one.
 */

/** Score names and feature names together (spec 2.3). */
export type RuleField = FeatureName | ScoreName;
export const RULE_FIELDS: readonly RuleField[] = [...SCORE_NAMES, ...FEATURE_NAMES];

export const COMPARISON_OPS = ['>', '>=', '<', '<='] as const;
export type ComparisonOp = (typeof COMPARISON_OPS)[number];

/**
 * `value`: the field's value in this snapshot. `change`: the field's value minus its value in
 * the token's previous snapshot (null when either is null or there is none), for "rose by".
 */
export const CONDITION_MEASURES = ['value', 'change'] as const;
export type ConditionMeasure = (typeof CONDITION_MEASURES)[number];

export interface RuleCondition {
  field: RuleField;
  op: ComparisonOp;
  value: number;
  /** Defaults to `value`. */
  measure?: ConditionMeasure;
}

/**
 * A signal ends at the first of: `lapseMinutes` of event time after the last snapshot of the
 * token on which all its conditions held, or `maxAgeMinutes` after it fired.
 */
export interface EndRule {
  lapseMinutes: number;
  maxAgeMinutes: number;
}

export interface SignalRule {
  /** Lower snake case; with the version it forms the rule version `<name>@<version>`. */
  name: string;
  version: string;
  /** Signal type, upper snake case. */
  type: string;
  label: string;
  description: string;
  conditions: RuleCondition[];
  end: EndRule;
  /** After a signal of this rule ended on a token, minutes before the rule may fire on it again. */
  cooldownMinutes: number;
}

/** A rule checked at load, with the derived values evaluation needs. */
export interface LoadedRule extends SignalRule {
  ruleVersion: string;
  lapseMs: number;
  maxAgeMs: number;
  cooldownMs: number;
}

export interface RuleSet {
  rules: readonly LoadedRule[];
  /** Fields some condition reads as a change: the state keeps their previous values per token. */
  changeFields: readonly RuleField[];
}

export class RuleSetError extends Error {
  readonly code = 'INVALID_RULE_SET';
}

const RULE_NAME = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const SIGNAL_TYPE = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*$/;
const VERSION = /^\d+(?:\.\d+)*$/;
const MINUTE_MS = 60_000;

const isRuleField = (f: string): f is RuleField => (RULE_FIELDS as readonly string[]).includes(f);

/** Checks a rule set and prepares it for evaluation; throws RuleSetError naming the rule and the fault. */
export function loadRuleSet(rules: readonly SignalRule[]): RuleSet {
  const names = new Set<string>();
  const types = new Set<string>();
  const changeFields = new Set<RuleField>();
  const loaded = rules.map((rule): LoadedRule => {
    const fail = (why: string): never => {
      throw new RuleSetError(`signal rule ${rule.name || '(unnamed)'}: ${why}`);
    };
    if (!RULE_NAME.test(rule.name)) fail('name must be lower snake case');
    if (!VERSION.test(rule.version)) fail(`version ${rule.version} must be dotted numbers`);
    if (!SIGNAL_TYPE.test(rule.type)) fail(`type ${rule.type} must be upper snake case`);
    if (names.has(rule.name)) fail('duplicate rule name');
    if (types.has(rule.type)) fail(`duplicate signal type ${rule.type}`);
    names.add(rule.name);
    types.add(rule.type);
    if (!rule.label.trim() || !rule.description.trim()) fail('label and description are required');
    if (rule.conditions.length === 0) fail('needs at least one condition');
    for (const c of rule.conditions) {
      if (!isRuleField(c.field)) fail(`unknown field ${String(c.field)}`);
      if (!COMPARISON_OPS.includes(c.op)) fail(`unknown op ${String(c.op)} on ${c.field}`);
      if (!Number.isFinite(c.value)) fail(`value of ${c.field} must be a finite number`);
      const measure = c.measure ?? 'value';
      if (!CONDITION_MEASURES.includes(measure)) fail(`unknown measure ${String(measure)} on ${c.field}`);
      if (measure === 'change') changeFields.add(c.field);
    }
    const { lapseMinutes, maxAgeMinutes } = rule.end;
    if (!(lapseMinutes > 0) || !(maxAgeMinutes > 0)) fail('end rule minutes must be positive');
    if (lapseMinutes > maxAgeMinutes) fail('end rule lapse must not exceed the maximum age');
    if (!(rule.cooldownMinutes >= 0)) fail('cooldown must be zero or more minutes');
    return {
      ...rule,
      ruleVersion: `${rule.name}@${rule.version}`,
      lapseMs: lapseMinutes * MINUTE_MS,
      maxAgeMs: maxAgeMinutes * MINUTE_MS,
      cooldownMs: rule.cooldownMinutes * MINUTE_MS,
    };
  });
  return { rules: loaded, changeFields: [...changeFields] };
}

export function fieldValue(scored: ScoredSnapshot, field: RuleField): number | null {
  const v = (SCORE_NAMES as readonly string[]).includes(field) ? scored.scores[field as ScoreName] : scored.features[field];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export function compare(actual: number | null, op: ComparisonOp, threshold: number): boolean {
  if (actual === null) return false;
  switch (op) {
    case '>':
      return actual > threshold;
    case '>=':
      return actual >= threshold;
    case '<':
      return actual < threshold;
    case '<=':
      return actual <= threshold;
  }
}

/**
 * How far past its threshold a met condition is, 0–1: the distance over the threshold's size
 * (1 when the threshold is 0), capped at 1. A floor met exactly gives 0; twice the floor gives 1.
 */
export function margin(actual: number, op: ComparisonOp, threshold: number): number {
  const distance = op === '>' || op === '>=' ? actual - threshold : threshold - actual;
  const scale = threshold === 0 ? 1 : Math.abs(threshold);
  return Math.min(1, Math.max(0, distance / scale));
}

// ---- human wording ------------------------------------------------------------------

type FieldUnit = FeatureUnit | 'score';

const SCORE_PHRASES: Record<ScoreName, string> = {
  momentum: 'the momentum score',
  conviction: 'the conviction score',
  crowding: 'the crowding score',
  early_quality: 'the early-quality score',
  narrative_velocity: 'the narrative-velocity score',
  divergence: 'the divergence score',
  smart_cohort: 'the smart-cohort score',
};

const FEATURE_PHRASES: Record<FeatureName, string> = {
  mentions_15m: 'mentions in the last 15 minutes',
  mentions_1h: 'mentions in the last hour',
  mentions_6h: 'mentions in the last 6 hours',
  mentions_24h: 'mentions in the last 24 hours',
  unique_authors_15m: 'unique authors in the last 15 minutes',
  unique_authors_1h: 'unique authors in the last hour',
  unique_authors_6h: 'unique authors in the last 6 hours',
  unique_authors_24h: 'unique authors in the last 24 hours',
  mention_velocity_15m: 'the 15-minute mention rate over the hourly rate',
  mention_velocity_1h: "the last hour's mentions over the 24-hour hourly average",
  new_author_share_1h: "the share of new authors in the last hour",
  quality_weighted_attention_1h: "the quality-weighted attention of the last hour's authors",
  engagement_1h: 'engagement in the last hour',
  engagement_24h: 'engagement in the last 24 hours',
  price_usd: 'the price',
  price_change_15m: 'the price change over 15 minutes',
  price_change_1h: 'the price change over the last hour',
  price_change_24h: 'the price change over 24 hours',
  volume_1h: 'volume in the last hour',
  volume_24h: 'volume in the last 24 hours',
  volume_acceleration: "the last hour's volume over the 24-hour hourly average",
  liquidity_usd: 'liquidity',
  market_cap_usd: 'the market cap',
  trades_1h: 'trades in the last hour',
  narrative_share: "the narrative's share of mentions",
  late_events_24h: 'late events in the last 24 hours',
};

const OP_WORDS: Record<ComparisonOp, string> = { '>': 'above', '>=': 'at least', '<': 'below', '<=': 'at most' };

function unitOf(field: RuleField): FieldUnit {
  return field in FEATURE_DEFINITIONS ? FEATURE_DEFINITIONS[field as FeatureName].unit : 'score';
}

function formatNumber(v: number, unit: FieldUnit, signed: boolean): string {
  const sign = signed && v > 0 ? '+' : '';
  switch (unit) {
    case 'fraction':
      return `${sign}${round(v * 100, 1)}%`;
    case 'count':
      return `${sign}${round(v, 1)}`;
    case 'ratio':
      return `${sign}${round(v, 2)}x`;
    case 'usd':
      return `${sign}$${round(v, 0)}`;
    case 'usd_per_token':
      return `${sign}$${Number(v.toPrecision(4))}`;
    case 'weighted_authors':
    case 'score':
      return `${sign}${round(v, 2)}`;
  }
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** A sentence about one met condition, from the actual value, e.g. "Unique authors in the last hour is 5 (at most 6)". */
export function describeCondition(c: RuleCondition, actual: number): string {
  const unit = unitOf(c.field);
  const phrase = c.field in SCORE_PHRASES ? SCORE_PHRASES[c.field as ScoreName] : FEATURE_PHRASES[c.field as FeatureName];
  const limit = `${OP_WORDS[c.op]} ${formatNumber(c.value, unit, c.measure === 'change')}`;
  const sentence =
    c.measure === 'change'
      ? `${phrase} changed by ${formatNumber(actual, unit, true)} since the previous snapshot (${limit})`
      : `${phrase} is ${formatNumber(actual, unit, false)} (${limit})`;
  return sentence[0].toUpperCase() + sentence.slice(1);
}
