import type { ScanRule } from '../../projections/read-models/scan.ts';
import type { Candidate, PricePath } from '../history/source.ts';
import { compare } from '../../processors/quant-engine/signals/rule-language.ts';
import type { BacktestUniverse } from './spec.ts';

/**
 * The leakage checks a result carries (issue point 3). Each re-verifies, from what the run
 * actually read, one way the future could have leaked into an entry, and says how many of
 * the entries it looked at passed. A run whose checks do not all pass is still returned, so
 * the failure is visible rather than hidden.
 */

export interface LeakageCheck {
  check: string;
  verified: string;
  checked: number;
  passed: number;
  ok: boolean;
}

export interface TakenEntry {
  candidate: Candidate;
  /** Null while unresolved: its window ends after the data. */
  path: PricePath | null;
  died: boolean;
}

function check(name: string, verified: string, results: readonly boolean[]): LeakageCheck {
  const passed = results.filter(Boolean).length;
  return { check: name, verified, checked: results.length, passed, ok: passed === results.length };
}

export function leakageChecks(input: {
  entries: readonly TakenEntry[];
  rules: readonly ScanRule[];
  universe: BacktestUniverse;
  horizonMs: number;
  cooldownMs: number;
  dataEnd: number;
  /** The time each entry was taken at, by index (its snapshot's time by construction). */
  entryTimes: readonly number[];
}): LeakageCheck[] {
  const { entries, rules, universe, horizonMs, cooldownMs, dataEnd, entryTimes } = input;
  const resolved = entries.flatMap((e, i) => (e.path ? [{ path: e.path, t: entryTimes[i] }] : []));
  const lastByToken = new Map<string, number>();
  const spacing = entries.map((e, i) => {
    const previous = lastByToken.get(e.candidate.tokenId);
    lastByToken.set(e.candidate.tokenId, entryTimes[i]);
    return previous === undefined || entryTimes[i] - previous >= cooldownMs;
  });
  const chains = universe.chains;
  const minLiquidity = universe.minLiquidityUsd;
  const laterDied = entries.filter((e) => e.died).length;
  return [
    check(
      'inputs_at_or_before_entry',
      'the snapshot whose rule values and price an entry used has an event time at or before the entry time',
      entries.map((e, i) => e.candidate.ts <= entryTimes[i]),
    ),
    check(
      'outcomes_after_entry',
      'every price of an outcome comes from after its entry and by entry + horizon, and the horizon had passed in the data',
      resolved.map(
        ({ path, t }) =>
          path.ts === t &&
          t + horizonMs <= dataEnd &&
          (path.ticks === 0 || (path.firstTs !== null && path.firstTs > t && path.lastTs !== null && path.lastTs <= t + horizonMs)),
      ),
    ),
    check(
      'cooldown_spacing',
      'no two entries of one token are closer than the cooldown',
      spacing,
    ),
    check(
      'universe_as_of_entry',
      `each entry was in the universe by its own snapshot at entry (chain, liquidity then); tokens that died later stay in it (${laterDied} such entries)`,
      entries.map(
        (e) =>
          (chains === undefined || chains.includes(e.candidate.chain as (typeof chains)[number])) &&
          (minLiquidity === undefined || (e.candidate.liquidityUsd !== null && e.candidate.liquidityUsd >= minLiquidity)),
      ),
    ),
    check(
      'rule_fields_at_entry',
      'every rule field exists in the snapshot at entry and its value there satisfies the rule',
      entries.map((e) => rules.every((r) => compare(e.candidate.values[r.field] ?? null, r.op, r.value))),
    ),
  ];
}
