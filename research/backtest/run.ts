import { MODEL_VERSIONS } from '../../processors/quant-engine/scores/models.ts';
import { isRuleField, type RuleField } from '../../projections/tables/quant.ts';
import { DISCLAIMER, iso } from '../../presenters/resource.ts';
import type { Candidate, HistorySource, PathEntry, PricePath } from '../history/source.ts';
import { leakageChecks, type LeakageCheck, type TakenEntry } from './leakage.ts';
import { outcomeOf, type EntryOutcome } from './outcome.ts';
import { HORIZON_MS, type BacktestSpec, type DeadTokenPolicy, type Horizon } from './spec.ts';
import { distribution, summarise, type Distribution, type OutcomeSummary } from './summary.ts';

/**
 * A strictly point-in-time backtest (issue point 3). Entries are snapshots on which every
 * rule held with the snapshot's own values, in time order; a token's next entry waits for the
 * cooldown. An entry's outcome is its price path over (t, t + horizon], taken only when the
 * data reaches t + horizon; later entries are left out and counted. The baseline is every
 * eligible token-time of the same universe and window, sampled at the same spacing.
 */

export const BACKTEST_MODEL_VERSION = 'backtest@1';
/** Below this many entries the result warns that its figures are not reliable. */
export const SMALL_N = 30;
/** Best and worst entries listed. */
export const EXTREMES = 5;

export interface BacktestOptions {
  onProgress?: (scanned: number, total: number) => void;
  signal?: AbortSignal;
  /** Event time the run is as of: data after it is not read (default: the end of the data). */
  now?: number;
}

export interface BacktestEvent {
  token_id: string;
  chain: string;
  entry_at: string;
  entry_price: number;
  exit_at: string;
  exit_price: number | null;
  return: number;
  max_drawdown: number;
  time_to_peak_ms: number;
  died: boolean;
  rule_values: Record<string, number | null>;
}

export interface BacktestWarning {
  code: 'small_n' | 'dead_tokens_excluded' | 'overlapping_windows' | 'unresolved_entries' | 'no_history';
  message: string;
}

export interface BaselineSummary extends OutcomeSummary {
  description: string;
}

export interface BacktestResult extends OutcomeSummary {
  horizon: Horizon;
  cooldown: Horizon;
  dead_token_policy: DeadTokenPolicy;
  window: { from: string | null; to: string | null };
  data_end: string | null;
  counts: {
    candidates: number;
    unpriced: number;
    cooled_down: number;
    unresolved: number;
    dead: number;
    dead_excluded: number;
  };
  best: BacktestEvent[];
  worst: BacktestEvent[];
  return_distribution: Distribution;
  drawdown_distribution: Distribution;
  baseline: BaselineSummary;
  excess: { hit_rate: number | null; median_return: number | null; mean_return: number | null };
  warnings: BacktestWarning[];
  leakage_checks: LeakageCheck[];
  events: BacktestEvent[];
  model_versions: Record<string, string>;
  disclaimer: string;
}

function eventOf(candidate: Candidate, outcome: EntryOutcome, horizonMs: number, fields: readonly RuleField[]): BacktestEvent {
  const values: Record<string, number | null> = {};
  for (const f of fields) values[f] = candidate.values[f] ?? null;
  return {
    token_id: candidate.tokenId,
    chain: candidate.chain,
    entry_at: iso(candidate.ts),
    entry_price: candidate.priceUsd!,
    exit_at: iso(candidate.ts + horizonMs),
    exit_price: outcome.exitPrice,
    return: outcome.forwardReturn,
    max_drawdown: outcome.maxDrawdown,
    time_to_peak_ms: outcome.timeToPeakMs,
    died: outcome.died,
    rule_values: values,
  };
}

/** The summary of events as the result states it; also used to recompute a result from its events. */
export function summariseEvents(events: readonly BacktestEvent[]): OutcomeSummary {
  return summarise(events.map((e) => ({ forwardReturn: e.return, maxDrawdown: e.max_drawdown, timeToPeakMs: e.time_to_peak_ms })));
}

function difference(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a - b;
}

export async function runBacktest(spec: BacktestSpec, history: HistorySource, options: BacktestOptions = {}): Promise<BacktestResult> {
  const horizonMs = HORIZON_MS[spec.horizon];
  const cooldownMs = HORIZON_MS[spec.cooldown];
  const fields = [...new Set(spec.rules.map((r) => r.field))].filter(isRuleField);
  const bounds = await history.bounds();
  const dataEnd = bounds === null ? null : Math.min(bounds.last, options.now ?? Infinity);
  const from = bounds === null ? null : Math.max(spec.from ?? bounds.first, bounds.first);
  const to = dataEnd === null ? null : Math.min(spec.to ?? dataEnd, dataEnd);

  const taken: TakenEntry[] = [];
  const counts = { candidates: 0, unpriced: 0, cooled_down: 0, unresolved: 0, dead: 0, dead_excluded: 0 };
  let baselinePaths: PricePath[] = [];
  if (from !== null && to !== null && dataEnd !== null && from <= to) {
    const total = await history.countSnapshots(from, to);
    const lastEntry = new Map<string, number>();
    const pages = history.candidates(
      { conditions: spec.rules.map((r) => ({ field: r.field as RuleField, op: r.op, value: r.value })), from, to, universe: spec.universe, fields },
      { signal: options.signal },
    );
    for await (const page of pages) {
      for (const c of page.candidates) {
        counts.candidates++;
        if (c.priceUsd === null || !(c.priceUsd > 0)) {
          counts.unpriced++;
          continue;
        }
        const previous = lastEntry.get(c.tokenId);
        if (previous !== undefined && c.ts - previous < cooldownMs) {
          counts.cooled_down++;
          continue;
        }
        lastEntry.set(c.tokenId, c.ts);
        taken.push({ candidate: c, path: null, died: false });
      }
      options.onProgress?.(Math.round((total * (Math.min(page.until, to) - from + 1)) / (to - from + 1)), total);
    }
    options.signal?.throwIfAborted();
    const resolvable = taken.filter((e) => e.candidate.ts + horizonMs <= dataEnd);
    counts.unresolved = taken.length - resolvable.length;
    const requests: PathEntry[] = resolvable.map((e) => ({
      tokenId: e.candidate.tokenId,
      ts: e.candidate.ts,
      entryPrice: e.candidate.priceUsd!,
      entryLiquidity: e.candidate.liquidityUsd,
    }));
    const paths = await history.pricePaths(requests, horizonMs);
    resolvable.forEach((e, i) => (e.path = paths[i]));
    options.signal?.throwIfAborted();
    // The baseline's last entries must also be resolved by the end of the data.
    const baselineTo = Math.min(to, dataEnd - horizonMs);
    if (baselineTo >= from) {
      baselinePaths = await history.baselinePaths({ from, to: baselineTo, universe: spec.universe, spacingMs: cooldownMs }, horizonMs);
    }
  }

  const events: BacktestEvent[] = [];
  for (const e of taken) {
    if (e.path === null) continue;
    const outcome = outcomeOf(e.path, horizonMs, spec.deadTokenPolicy);
    e.died = outcome?.died ?? true;
    if (e.died) counts.dead++;
    if (outcome === null) {
      counts.dead_excluded++;
      continue;
    }
    events.push(eventOf(e.candidate, outcome, horizonMs, fields));
  }
  const baselineOutcomes = baselinePaths.flatMap((p) => {
    const o = outcomeOf(p, horizonMs, spec.deadTokenPolicy);
    return o === null ? [] : [o];
  });
  const summary = summariseEvents(events);
  const baseline: BaselineSummary = {
    ...summarise(baselineOutcomes),
    description:
      'Every eligible token-time of the same universe and window (a priced snapshot, resolved by the end of the data), ' +
      'sampled once per token per cooldown, valued with the same dead-token policy.',
  };
  const ranked = [...events].sort((a, b) => b.return - a.return || a.entry_at.localeCompare(b.entry_at) || a.token_id.localeCompare(b.token_id));
  return {
    horizon: spec.horizon,
    cooldown: spec.cooldown,
    dead_token_policy: spec.deadTokenPolicy,
    window: { from: from === null ? null : iso(from), to: to === null ? null : iso(to) },
    data_end: dataEnd === null ? null : iso(dataEnd),
    ...summary,
    counts,
    best: ranked.slice(0, EXTREMES),
    worst: ranked.slice(-EXTREMES).reverse(),
    return_distribution: distribution(events.map((e) => e.return)),
    drawdown_distribution: distribution(events.map((e) => e.max_drawdown)),
    baseline,
    excess: {
      hit_rate: difference(summary.hit_rate, baseline.hit_rate),
      median_return: difference(summary.median_return, baseline.median_return),
      mean_return: difference(summary.mean_return, baseline.mean_return),
    },
    warnings: warningsOf(spec, counts, summary.n, bounds === null),
    leakage_checks: leakageChecks({
      entries: taken,
      rules: spec.rules,
      universe: spec.universe,
      horizonMs,
      cooldownMs,
      dataEnd: dataEnd ?? 0,
      entryTimes: taken.map((e) => e.candidate.ts),
    }),
    events,
    model_versions: { ...MODEL_VERSIONS, backtest: BACKTEST_MODEL_VERSION },
    disclaimer: DISCLAIMER,
  };
}

function warningsOf(spec: BacktestSpec, counts: BacktestResult['counts'], n: number, noHistory: boolean): BacktestWarning[] {
  const warnings: BacktestWarning[] = [];
  if (noHistory) warnings.push({ code: 'no_history', message: 'There is no snapshot history to backtest on yet.' });
  if (n < SMALL_N) warnings.push({ code: 'small_n', message: `Only ${n} entries: below ${SMALL_N} the figures are not reliable.` });
  if (counts.dead_excluded > 0) {
    warnings.push({
      code: 'dead_tokens_excluded',
      message: `${counts.dead_excluded} entries on tokens that died inside the horizon were excluded (dead_token_policy exclude); the figures flatter the rule.`,
    });
  }
  if (HORIZON_MS[spec.cooldown] < HORIZON_MS[spec.horizon]) {
    warnings.push({
      code: 'overlapping_windows',
      message: `The cooldown (${spec.cooldown}) is shorter than the horizon (${spec.horizon}): windows of one token overlap, so entries are not independent.`,
    });
  }
  if (counts.unresolved > 0) {
    warnings.push({
      code: 'unresolved_entries',
      message: `${counts.unresolved} entries were left out: their horizon had not passed by the end of the data.`,
    });
  }
  return warnings;
}
