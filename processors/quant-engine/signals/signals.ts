import { TOPICS } from '../../../schemas/catalogue.ts';
import type { Signal, SignalCondition, SignalEndReason } from '../../../schemas/records/quant-signals.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';
import type { ActiveSignal, ActiveSignalsLookup, Emitter, ScoredSnapshot } from '../contracts.ts';
import { compare, describeCondition, fieldValue, margin, type LoadedRule, type RuleCondition, type RuleSet } from './rule-language.ts';
import { DEFAULT_RULE_SET } from './rules.ts';

/**
 * Fires and ends signals from scored snapshots (pure; event time only). For each snapshot,
 * in event-time order: signals of any token whose end time passed strictly before the
 * snapshot end first (so the result never depends on the order of tokens within one grid
 * time); then each rule is checked on the snapshot's token. A rule fires when all its
 * conditions hold, the token has no active signal of it and its cooldown has passed.
 *
 * Nothing here reads the analog pool: the summary a firing carries is filled in downstream,
 * by the analogs stage (processors/analogs), so the records go out as drafts without one.
 */

export const SIGNAL_DRAFTS_TOPIC = TOPICS.signalDrafts.name;
/** Earlier firings of a rule on a token whose ids a record carries. */
const PRIOR_IDS_KEPT = 5;

interface ActiveEntry {
  ruleName: string;
  signal: Signal;
  /** Event time of the last snapshot of the token on which every condition held. */
  lastHeldAt: number;
  lapseMs: number;
  expiresAt: number;
  cooldownMs: number;
}

interface FiringHistory {
  count: number;
  /** Newest first. */
  lastIds: string[];
  cooldownUntil: number;
}

/** A token's active signals, by rule name in the order they fired. */
type TokenActive = readonly (readonly [ruleName: string, entry: ActiveEntry])[];

/**
 * Kept per key (runtime/state/tables.ts), so that a task's store checkpoints only the tokens
 * a snapshot changed. Values are replaced, never changed in place.
 */
export interface SignalsState {
  /** tokenId → its active signals. */
  active: KeyedTable<TokenActive>;
  /** `<rule name>\u001f<tokenId>` → earlier firings. */
  history: KeyedTable<FiringHistory>;
  /** tokenId → values of the fields some rule reads as a change, at the token's last snapshot. */
  previous: KeyedTable<Record<string, number | null>>;
  /** `sweptTo`: event time up to which ends have been swept. */
  clock: KeyedTable<number>;
  /**
   * Tokens with an active signal, in the order each got its first since it last had none: the
   * order ends are swept in. A table on disk iterates by key, so the order is its own table
   * (token → rank), read into `sweepOrder` when the state is made.
   */
  sweepRanks: KeyedTable<number>;
  sweepOrder: Set<string>;
}

export function createSignalsState(tables: TableSource = IN_MEMORY_TABLES): SignalsState {
  const sweepRanks = tables.table<number>('signals.sweep-ranks');
  const ranked = [...sweepRanks.entries()].sort((a, b) => a[1] - b[1]);
  return {
    active: tables.table('signals.active'),
    history: tables.table('signals.history'),
    previous: tables.table('signals.previous'),
    clock: tables.table('signals.clock'),
    sweepRanks,
    sweepOrder: new Set(ranked.map(([tokenId]) => tokenId)),
  };
}

function setActive(state: SignalsState, tokenId: string, active: TokenActive): void {
  if (active.length > 0) {
    if (!state.sweepOrder.has(tokenId)) {
      const rank = (state.clock.get('nextRank') ?? 0) + 1;
      state.clock.set('nextRank', rank);
      state.sweepRanks.set(tokenId, rank);
      state.sweepOrder.add(tokenId);
    }
    state.active.set(tokenId, active);
  } else {
    state.active.delete(tokenId);
    state.sweepRanks.delete(tokenId);
    state.sweepOrder.delete(tokenId);
  }
}

export interface SignalsResult {
  fired: Signal[];
  ended: Signal[];
}

export function evaluateSignals(
  state: SignalsState,
  scored: ScoredSnapshot,
  emitter: Emitter,
  ruleSet: RuleSet = DEFAULT_RULE_SET,
): SignalsResult {
  const result: SignalsResult = { fired: [], ended: [] };
  const ts = scored.ts;
  if (ts > (state.clock.get('sweptTo') ?? -Infinity)) {
    sweepEnds(state, ts, emitter, result);
    state.clock.set('sweptTo', ts);
  }

  const previous = state.previous.get(scored.tokenId);
  for (const rule of ruleSet.rules) {
    const met = metConditions(rule, scored, previous);
    const held = state.active.get(scored.tokenId)?.find(([name]) => name === rule.name)?.[1];
    if (held) {
      const entry = met ? { ...held, lastHeldAt: ts } : held;
      const end = endOf(entry);
      if (end.at > ts) {
        if (entry !== held) replaceActive(state, entry);
        continue;
      }
      endSignal(state, entry, end.at, end.reason, emitter, result);
    }
    if (!met) continue;
    const history = state.history.get(historyKey(rule.name, scored.tokenId));
    if (history && ts < history.cooldownUntil) continue;
    const signal = fire(state, rule, scored, met, history, emitter);
    const entry: ActiveEntry = {
      ruleName: rule.name,
      signal,
      lastHeldAt: ts,
      lapseMs: rule.lapseMs,
      expiresAt: ts + rule.maxAgeMs,
      cooldownMs: rule.cooldownMs,
    };
    // After an end above, the token's list no longer holds the rule: the new firing goes last.
    setActive(state, scored.tokenId, [...(state.active.get(scored.tokenId) ?? []), [rule.name, entry]]);
    result.fired.push(signal);
  }

  if (ruleSet.changeFields.length > 0) {
    const values: Record<string, number | null> = {};
    for (const field of ruleSet.changeFields) values[field] = fieldValue(scored, field);
    state.previous.set(scored.tokenId, values);
  }
  return result;
}

/** The signals active on each token, for the token snapshot and token.score.updated. */
export function activeSignalsLookup(state: SignalsState): ActiveSignalsLookup {
  return {
    active(tokenId: string): ActiveSignal[] {
      const entries = state.active.get(tokenId);
      if (!entries) return [];
      return entries.map(([, { signal }]) => ({
        signalId: signal.signalId,
        type: signal.type,
        ruleVersion: signal.ruleVersion,
        firedAt: signal.firedAt,
        strength: signal.strength,
      }));
    },
  };
}

interface MetCondition {
  condition: RuleCondition;
  actual: number;
}

/** The conditions with their actual values when every one holds; null otherwise. */
function metConditions(
  rule: LoadedRule,
  scored: ScoredSnapshot,
  previous: Record<string, number | null> | undefined,
): MetCondition[] | null {
  const met: MetCondition[] = [];
  for (const condition of rule.conditions) {
    const actual = measure(condition, scored, previous);
    if (actual === null || !compare(actual, condition.op, condition.value)) return null;
    met.push({ condition, actual });
  }
  return met;
}

function measure(c: RuleCondition, scored: ScoredSnapshot, previous: Record<string, number | null> | undefined): number | null {
  const now = fieldValue(scored, c.field);
  if (c.measure !== 'change') return now;
  const before = previous?.[c.field] ?? null;
  return now === null || before === null ? null : now - before;
}

function fire(
  state: SignalsState,
  rule: LoadedRule,
  scored: ScoredSnapshot,
  met: MetCondition[],
  history: FiringHistory | undefined,
  emitter: Emitter,
): Signal {
  const strength = (100 * met.reduce((sum, m) => sum + margin(m.actual, m.condition.op, m.condition.value), 0)) / met.length;
  const conditions: SignalCondition[] = met.map(({ condition, actual }) => ({
    field: condition.field,
    op: condition.op,
    measure: condition.measure ?? 'value',
    threshold: condition.value,
    actual,
  }));
  const features: Record<string, number | null> = {};
  for (const [name, v] of Object.entries(scored.features)) features[name] = typeof v === 'number' && Number.isFinite(v) ? v : null;
  const signal: Signal = {
    signalId: emitter.id('sig', rule.ruleVersion, scored.tokenId, scored.ts),
    type: rule.type,
    label: rule.label,
    ruleVersion: rule.ruleVersion,
    status: 'active',
    firedAt: scored.ts,
    endedAt: null,
    endReason: null,
    strength: Math.round(strength * 10) / 10,
    scores: { ...scored.scores },
    why: met.map((m) => describeCondition(m.condition, m.actual)),
    conditions,
    features,
    analogs: null,
    tokenId: scored.tokenId,
    priorFirings: history?.count ?? 0,
    priorSignalIds: history ? [...history.lastIds] : [],
    version: 1,
    ts: scored.ts,
  };
  state.history.set(historyKey(rule.name, scored.tokenId), {
    count: (history?.count ?? 0) + 1,
    lastIds: [signal.signalId, ...(history?.lastIds ?? [])].slice(0, PRIOR_IDS_KEPT),
    cooldownUntil: history?.cooldownUntil ?? -Infinity,
  });
  emitter.emit({ topic: SIGNAL_DRAFTS_TOPIC, key: signal.tokenId, value: signal, timestamp: signal.ts });
  return signal;
}

/** When the end rule is met if nothing holds again: the earlier of the lapse and the maximum age. */
function endOf(entry: ActiveEntry): { at: number; reason: SignalEndReason } {
  const lapse = entry.lastHeldAt + entry.lapseMs;
  return lapse < entry.expiresAt ? { at: lapse, reason: 'conditions_lapsed' } : { at: entry.expiresAt, reason: 'max_age' };
}

/** Ends the signals of every token whose end time is strictly before `ts`: no snapshot at or after it can save them. */
function sweepEnds(state: SignalsState, ts: number, emitter: Emitter, result: SignalsResult): void {
  for (const tokenId of state.sweepOrder) {
    for (const [, entry] of state.active.get(tokenId) ?? []) {
      const end = endOf(entry);
      if (end.at < ts) endSignal(state, entry, end.at, end.reason, emitter, result);
    }
  }
}

/** Puts a changed entry in its place among its token's active signals. */
function replaceActive(state: SignalsState, entry: ActiveEntry): void {
  const tokenId = entry.signal.tokenId;
  setActive(state, tokenId, (state.active.get(tokenId) ?? []).map((pair) => (pair[0] === entry.ruleName ? ([entry.ruleName, entry] as const) : pair)));
}

function endSignal(
  state: SignalsState,
  entry: ActiveEntry,
  at: number,
  reason: SignalEndReason,
  emitter: Emitter,
  result: SignalsResult,
): void {
  const fired = entry.signal;
  const ended: Signal = { ...fired, status: 'ended', endedAt: at, endReason: reason, version: 2, ts: at };
  setActive(state, fired.tokenId, (state.active.get(fired.tokenId) ?? []).filter(([name]) => name !== entry.ruleName));
  const key = historyKey(entry.ruleName, fired.tokenId);
  const history = state.history.get(key);
  if (history) state.history.set(key, { ...history, cooldownUntil: at + entry.cooldownMs });
  emitter.emit({ topic: SIGNAL_DRAFTS_TOPIC, key: ended.tokenId, value: ended, timestamp: ended.ts });
  result.ended.push(ended);
}

function historyKey(ruleName: string, tokenId: string): string {
  return `${ruleName}\u001f${tokenId}`;
}
