import { HORIZON_MS, HORIZONS, type Horizon } from '../../processors/quant-engine/contracts.ts';
import { MODEL_VERSIONS } from '../../processors/quant-engine/scores/models.ts';
import { DISCLAIMER, iso } from '../../presenters/resource.ts';
import { outcomeOf } from '../backtest/outcome.ts';
import { distribution, summarise, type Distribution, type OutcomeSummary } from '../backtest/summary.ts';
import type { FieldCondition, HistorySource, PricePath } from '../history/source.ts';
import { firesAt, type FiringState } from './firing.ts';
import { EVENT_STUDIES, type EventStudy } from './studies.ts';

/**
 * Event studies (issue point 5): per horizon, the forward returns after a rule's firings
 * beside the unconditional baseline, as of a time in event time. A refresh continues from
 * the previous one's state: it replays firings only over the snapshots since, resolves the
 * pending events whose horizon has passed since, and samples the baseline over the slots
 * completed since. Every part is decided by event time alone, so refreshing hour by hour
 * gives the same figures as one computation at the same as-of time.
 */

export const EVENT_STUDY_MODEL_VERSION = 'event-study@1';
export const EVENT_STUDY_REFRESH_MS = 3_600_000;
/** The baseline samples each token once per max(horizon, this): unconditional returns need no more. */
export const BASELINE_MIN_SPACING_MS = 6 * 3_600_000;
/** Dead tokens are valued at their last price, the backtests' default. */
const DEAD_TOKEN_POLICY = 'last_price';

interface OutcomeLists {
  returns: number[];
  drawdowns: number[];
  peaks: number[];
}

interface PendingEvent {
  tokenId: string;
  ts: number;
  price: number;
  liquidity: number | null;
  /** Index into HORIZONS of the next horizon to resolve; horizons resolve shortest first. */
  next: number;
}

export interface StudyState {
  slug: string;
  ruleVersion: string;
  firing: FiringState;
  /** Snapshots up to this event time have been replayed. */
  replayedTo: number;
  events: number;
  unpriced: number;
  pending: PendingEvent[];
  outcomes: Record<Horizon, OutcomeLists>;
}

export interface BaselineState {
  /** Per horizon, the slots before this time have been sampled. */
  sampledTo: Record<Horizon, number>;
  outcomes: Record<Horizon, OutcomeLists>;
}

/** What a refresh continues from: plain JSON. */
export interface EventStudiesState {
  asOf: number;
  baseline: BaselineState;
  studies: Record<string, StudyState>;
}

export interface EventStudyHorizon extends OutcomeSummary {
  horizon: Horizon;
  /** Events whose horizon had not passed at as_of. */
  pending: number;
  return_distribution: Distribution;
  baseline: OutcomeSummary;
  abnormal_mean_return: number | null;
  abnormal_median_return: number | null;
  excess_hit_rate: number | null;
}

export interface EventStudyResult {
  slug: string;
  title: string;
  description: string;
  signal_type: string;
  rule_version: string;
  conditions: { field: string; op: string; value: number; measure: 'value' | 'change' }[];
  as_of: string | null;
  events: number;
  unpriced_events: number;
  horizons: EventStudyHorizon[];
  baseline_description: string;
  model_versions: Record<string, string>;
  disclaimer: string;
}

function emptyLists(): Record<Horizon, OutcomeLists> {
  return Object.fromEntries(HORIZONS.map((h) => [h, { returns: [], drawdowns: [], peaks: [] }])) as unknown as Record<Horizon, OutcomeLists>;
}

function baselineSpacing(h: Horizon): number {
  return Math.max(HORIZON_MS[h], BASELINE_MIN_SPACING_MS);
}

function alignDown(t: number, step: number): number {
  return Math.floor(t / step) * step;
}

/** The as-of time of the last hourly refresh the data allows: the last whole hour of event time. */
export function refreshTime(dataEnd: number): number {
  return alignDown(dataEnd, EVENT_STUDY_REFRESH_MS);
}

function record(lists: OutcomeLists, path: PricePath, horizonMs: number): void {
  const o = outcomeOf(path, horizonMs, DEAD_TOKEN_POLICY)!;
  lists.returns.push(o.forwardReturn);
  lists.drawdowns.push(o.maxDrawdown);
  lists.peaks.push(o.timeToPeakMs);
}

function conditionsOf(study: EventStudy): FieldCondition[] {
  return study.rule.conditions.map((c) => ({ field: c.field, op: c.op, value: c.value, measure: c.measure ?? 'value' }));
}

function newStudyState(study: EventStudy, start: number): StudyState {
  return { slug: study.slug, ruleVersion: study.rule.ruleVersion, firing: {}, replayedTo: start - 1, events: 0, unpriced: 0, pending: [], outcomes: emptyLists() };
}

async function refreshStudy(state: StudyState, study: EventStudy, history: HistorySource, end: number, signal?: AbortSignal): Promise<void> {
  if (end > state.replayedTo) {
    const pages = history.candidates({ conditions: conditionsOf(study), from: state.replayedTo + 1, to: end, universe: {}, fields: [] }, { signal });
    for await (const page of pages) {
      for (const c of page.candidates) {
        if (!firesAt(state.firing, study.rule, c.tokenId, c.ts)) continue;
        state.events++;
        if (c.priceUsd === null || !(c.priceUsd > 0)) state.unpriced++;
        else state.pending.push({ tokenId: c.tokenId, ts: c.ts, price: c.priceUsd, liquidity: c.liquidityUsd, next: 0 });
      }
    }
    state.replayedTo = end;
  }
  for (let k = 0; k < HORIZONS.length; k++) {
    const h = HORIZONS[k];
    const horizonMs = HORIZON_MS[h];
    const due = state.pending.filter((e) => e.next === k && e.ts + horizonMs <= end);
    const paths = await history.pricePaths(
      due.map((e) => ({ tokenId: e.tokenId, ts: e.ts, entryPrice: e.price, entryLiquidity: e.liquidity })),
      horizonMs,
    );
    paths.forEach((p) => record(state.outcomes[h], p, horizonMs));
    for (const e of due) e.next = k + 1;
  }
  state.pending = state.pending.filter((e) => e.next < HORIZONS.length);
}

async function refreshBaseline(state: BaselineState, history: HistorySource, end: number): Promise<void> {
  for (const h of HORIZONS) {
    const spacing = baselineSpacing(h);
    // A slot is sampled once every token-time in it can be resolved: slot end + horizon ≤ end.
    const until = alignDown(end - HORIZON_MS[h], spacing);
    if (until <= state.sampledTo[h]) continue;
    const paths = await history.baselinePaths({ from: state.sampledTo[h], to: until - 1, universe: {}, spacingMs: spacing }, HORIZON_MS[h]);
    paths.forEach((p) => record(state.outcomes[h], p, HORIZON_MS[h]));
    state.sampledTo[h] = until;
  }
}

/**
 * Brings the studies' state to `asOf` (event time; data after it is never read) and returns
 * the new state. `state` is the previous refresh's, or null to start from the beginning of
 * history; a state of another rule version of a study is dropped and recomputed.
 */
export async function refreshEventStudies(
  state: EventStudiesState | null,
  history: HistorySource,
  asOf: number,
  options: { studies?: readonly EventStudy[]; signal?: AbortSignal } = {},
): Promise<EventStudiesState> {
  const studies = options.studies ?? EVENT_STUDIES;
  if (state !== null && asOf < state.asOf) throw new RangeError(`event studies are already as of ${iso(state.asOf)}, after ${iso(asOf)}`);
  const bounds = await history.bounds();
  const next: EventStudiesState = state === null ? { asOf, baseline: { sampledTo: {} as Record<Horizon, number>, outcomes: emptyLists() }, studies: {} } : structuredClone(state);
  next.asOf = asOf;
  if (bounds === null) return next;
  const end = Math.min(asOf, bounds.last);
  for (const h of HORIZONS) next.baseline.sampledTo[h] ??= alignDown(bounds.first, baselineSpacing(h));
  await refreshBaseline(next.baseline, history, end);
  for (const study of studies) {
    let s = next.studies[study.slug];
    if (s === undefined || s.ruleVersion !== study.rule.ruleVersion) s = next.studies[study.slug] = newStudyState(study, bounds.first);
    await refreshStudy(s, study, history, end, options.signal);
  }
  return next;
}

function sortedStats(lists: OutcomeLists): { summary: OutcomeSummary; returns: number[] } {
  // Sorted by value, so the figures do not depend on the order outcomes were resolved in.
  const order = lists.returns.map((_, i) => i).sort((a, b) => lists.returns[a] - lists.returns[b] || lists.drawdowns[a] - lists.drawdowns[b] || lists.peaks[a] - lists.peaks[b]);
  const outcomes = order.map((i) => ({ forwardReturn: lists.returns[i], maxDrawdown: lists.drawdowns[i], timeToPeakMs: lists.peaks[i] }));
  return { summary: summarise(outcomes), returns: outcomes.map((o) => o.forwardReturn) };
}

function difference(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a - b;
}

/** One study's result from a refreshed state. */
export function eventStudyResult(state: EventStudiesState, study: EventStudy): EventStudyResult {
  const s = state.studies[study.slug] ?? newStudyState(study, 0);
  return {
    slug: study.slug,
    title: study.title,
    description: study.description,
    signal_type: study.rule.type,
    rule_version: study.rule.ruleVersion,
    conditions: study.rule.conditions.map((c) => ({ field: c.field, op: c.op, value: c.value, measure: c.measure ?? 'value' })),
    as_of: iso(state.asOf),
    events: s.events,
    unpriced_events: s.unpriced,
    horizons: HORIZONS.map((h, k) => {
      const events = sortedStats(s.outcomes[h]);
      const baseline = sortedStats(state.baseline.outcomes[h]).summary;
      return {
        horizon: h,
        ...events.summary,
        pending: s.pending.filter((e) => e.next <= k).length,
        return_distribution: distribution(events.returns),
        baseline,
        abnormal_mean_return: difference(events.summary.mean_return, baseline.mean_return),
        abnormal_median_return: difference(events.summary.median_return, baseline.median_return),
        excess_hit_rate: difference(events.summary.hit_rate, baseline.hit_rate),
      };
    }),
    baseline_description:
      'All token-times with a price, each token sampled once per max(horizon, 6 h), resolved by as_of; dead tokens valued at their last price.',
    model_versions: { ...MODEL_VERSIONS, event_study: EVENT_STUDY_MODEL_VERSION },
    disclaimer: DISCLAIMER,
  };
}

/** One study computed from the beginning of history up to `asOf`. */
export async function computeEventStudy(study: EventStudy, history: HistorySource, asOf: number): Promise<EventStudyResult> {
  return eventStudyResult(await refreshEventStudies(null, history, asOf, { studies: [study] }), study);
}
