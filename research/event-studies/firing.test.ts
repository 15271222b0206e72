import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../infra/feeds/sim/prng.ts';
import { SCORE_NAMES, type ScoreValues, type ScoredSnapshot } from '../../processors/quant-engine/contracts.ts';
import { FEATURE_NAMES } from '../../processors/quant-engine/features/definitions.ts';
import { compare, loadRuleSet, type LoadedRule, type SignalRule } from '../../processors/quant-engine/signals/rule-language.ts';
import { createSignalsState, evaluateSignals } from '../../processors/quant-engine/signals/signals.ts';
import { recordingEmitter } from '../../processors/quant-engine/tokens/fixtures.ts';
import { firesAt, type FiringState } from './firing.ts';

/**
 * The replay of firings from held snapshots gives exactly the firings of the signal engine
 * itself, run over every snapshot, for rules with value and change conditions.
 */

const MIN = 60_000;
const T0 = Date.UTC(2026, 4, 1);

const RULES: SignalRule[] = [
  {
    name: 'authors',
    version: '1',
    type: 'AUTHORS',
    label: 'Authors',
    description: 'Many authors.',
    conditions: [{ field: 'unique_authors_1h', op: '>=', value: 5 }],
    end: { lapseMinutes: 30, maxAgeMinutes: 120 },
    cooldownMinutes: 60,
  },
  {
    name: 'authors_jump',
    version: '1',
    type: 'AUTHORS_JUMP',
    label: 'Authors jump',
    description: 'Authors jump since the previous snapshot.',
    conditions: [
      { field: 'unique_authors_1h', op: '>=', value: 2, measure: 'change' },
      { field: 'mentions_1h', op: '>', value: 3 },
    ],
    end: { lapseMinutes: 15, maxAgeMinutes: 45 },
    cooldownMinutes: 25,
  },
];

function snapshots(seed: number): ScoredSnapshot[] {
  const random = seededRandom(seed);
  const out: ScoredSnapshot[] = [];
  const authors: Record<string, number> = { tk_a: 3, tk_b: 3, tk_c: 3 };
  for (let ts = T0; ts < T0 + 48 * 60 * MIN; ts += 5 * MIN) {
    for (const tokenId of ['tk_a', 'tk_b', 'tk_c']) {
      if (random() < 0.1) continue; // tokens miss snapshots now and then
      authors[tokenId] = Math.max(0, authors[tokenId] + Math.round((random() - 0.5) * 5));
      const features: Record<string, number | null> = Object.fromEntries(FEATURE_NAMES.map((n) => [n, null]));
      features.unique_authors_1h = authors[tokenId];
      features.mentions_1h = Math.round(random() * 8);
      const scores = Object.fromEntries(SCORE_NAMES.map((n) => [n, null])) as ScoreValues;
      out.push({ snapshotId: `snap_${tokenId}_${ts}`, tokenId, ts, features, scores, details: [], divergenceState: 'none' });
    }
  }
  return out;
}

function held(rule: LoadedRule, s: ScoredSnapshot, previous: ScoredSnapshot | undefined): boolean {
  return rule.conditions.every((c) => {
    const now = s.features[c.field] ?? null;
    if (c.measure !== 'change') return compare(now, c.op, c.value);
    const before = previous?.features[c.field] ?? null;
    return now !== null && before !== null && compare(now - before, c.op, c.value);
  });
}

describe('firing replay', () => {
  for (const seed of [1, 2, 3]) {
    it(`fires exactly where the signal engine fires (seed ${seed})`, () => {
      const ruleSet = loadRuleSet(RULES);
      const all = snapshots(seed);
      const engine = createSignalsState();
      const emitter = recordingEmitter();
      const engineFirings: string[] = [];
      for (const s of all) {
        for (const signal of evaluateSignals(engine, s, emitter, ruleSet).fired) engineFirings.push(`${signal.type} ${signal.tokenId} ${signal.firedAt}`);
      }
      const replayFirings: string[] = [];
      const states: Record<string, FiringState> = Object.fromEntries(ruleSet.rules.map((r) => [r.name, {}]));
      const previous = new Map<string, ScoredSnapshot>();
      for (const s of all) {
        for (const rule of ruleSet.rules) {
          if (held(rule, s, previous.get(s.tokenId)) && firesAt(states[rule.name], rule, s.tokenId, s.ts)) replayFirings.push(`${rule.type} ${s.tokenId} ${s.ts}`);
        }
        previous.set(s.tokenId, s);
      }
      expect(engineFirings.length).toBeGreaterThan(20);
      expect(replayFirings).toEqual(engineFirings);
    });
  }
});
