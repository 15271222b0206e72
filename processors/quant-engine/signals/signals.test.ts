import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import { SignalSchema, type Signal } from '../../../schemas/records/quant-signals.ts';
import { SCORE_NAMES, type AnalogSummary, type ScoreValues, type ScoredSnapshot } from '../contracts.ts';
import { FEATURE_NAMES, type FeatureName } from '../features/definitions.ts';
import { recordingEmitter, seededRandom } from '../tokens/fixtures.ts';
import { loadRuleSet, RuleSetError, type SignalRule } from './rule-language.ts';
import { DEFAULT_RULE_SET, EVENT_STUDY_SIGNALS, SIGNAL_RULES, signalRuleDocs } from './rules.ts';
import { activeSignalsLookup, createSignalsState, evaluateSignals, SIGNAL_DRAFTS_TOPIC, type SignalsState } from './signals.ts';

const T0 = Date.UTC(2026, 4, 1);
const MIN = 60_000;

function snap(tokenId: string, ts: number, features: Partial<Record<FeatureName, number | null>> = {}, scores: Partial<ScoreValues> = {}): ScoredSnapshot {
  const f: Record<string, number | null> = {};
  for (const name of FEATURE_NAMES) f[name] = features[name] ?? null;
  const s = Object.fromEntries(SCORE_NAMES.map((n) => [n, scores[n] ?? null])) as ScoreValues;
  return { snapshotId: `snap_${tokenId}_${ts}`, tokenId, ts, features: f, scores: s, details: [], divergenceState: 'none' };
}

/** An analog summary, as the analogs stage fills one in. */
const SUMMARY: AnalogSummary = { n: 40, median24h: 0.12, worstDrawdown24h: -0.3, positiveShare: 0.6, confidence: 'MEDIUM' };


/** One rule on unique_authors_1h, with short end and cooldown times. */
const TEST_RULE: SignalRule = {
  name: 'test_authors',
  version: '2',
  type: 'TEST_AUTHORS',
  label: 'Test authors',
  description: 'At least 5 unique authors in the hour.',
  conditions: [{ field: 'unique_authors_1h', op: '>=', value: 5 }],
  end: { lapseMinutes: 30, maxAgeMinutes: 120 },
  cooldownMinutes: 60,
};
const TEST_SET = loadRuleSet([TEST_RULE]);

const EARLY = {
  quality_weighted_attention_1h: 1.8,
  mention_velocity_1h: 3.2,
  unique_authors_1h: 3,
  price_change_1h: 0.02,
  price_change_24h: 0.15,
  volume_acceleration: 1.4,
} satisfies Partial<Record<FeatureName, number>>;

describe('firing', () => {
  it('fires EARLY_ACCELERATION with the values and reasons of the snapshot that met every condition, as a draft without analogs', () => {
    const state = createSignalsState();
    const emitter = recordingEmitter();
    const scored = snap('tk_a', T0, { ...EARLY, mentions_1h: 3 }, { early_quality: 72, crowding: 20 });
    const { fired, ended } = evaluateSignals(state, scored, emitter);

    expect(ended).toEqual([]);
    expect(fired).toHaveLength(1);
    const s = fired[0];
    expect(s).toMatchObject({
      type: 'EARLY_ACCELERATION',
      label: 'Early acceleration',
      ruleVersion: 'early_acceleration@1',
      status: 'active',
      firedAt: T0,
      endedAt: null,
      endReason: null,
      tokenId: 'tk_a',
      priorFirings: 0,
      priorSignalIds: [],
      version: 1,
      ts: T0,
    });
    expect(s.signalId).toBe(emitter.id('sig', 'early_acceleration@1', 'tk_a', T0));
    expect(s.scores.early_quality).toBe(72);
    expect(s.scores.momentum).toBeNull();
    expect(s.features.mentions_1h).toBe(3);
    expect(s.features.unique_authors_1h).toBe(3);
    expect(s.analogs).toBeNull();

    // Every condition is reported with the value that met it, and a sentence built from that value.
    const rule = SIGNAL_RULES.find((r) => r.type === 'EARLY_ACCELERATION')!;
    expect(s.conditions).toEqual(
      rule.conditions.map((c) => ({ field: c.field, op: c.op, measure: 'value', threshold: c.value, actual: EARLY[c.field as keyof typeof EARLY] })),
    );
    expect(s.why).toContain('Unique authors in the last hour is 3 (at most 6)');
    expect(s.why).toContain("The quality-weighted attention of the last hour's authors is 1.8 (at least 1.5)");
    expect(s.why).toContain('The price change over the last hour is 2% (at most 8%)');
    expect(s.why).toContain("The last hour's mentions over the 24-hour hourly average is 3.2x (at least 2.5x)");
    expect(s.why).toHaveLength(rule.conditions.length);

    // Strength: mean of how far past each threshold, relative to its size (1 for a zero threshold), capped at 1.
    const margins = [0.3 / 1.5, 0.7 / 2.5, 3 / 6, 0.06 / 0.08, 0.15 / 1, 0.45 / 0.6, 1.6 / 3];
    expect(s.strength).toBeCloseTo((100 * margins.reduce((a, b) => a + b)) / margins.length, 1);

    expect(emitter.outputs).toEqual([{ topic: SIGNAL_DRAFTS_TOPIC, key: 'tk_a', value: s, timestamp: T0 }]);
    expect(SignalSchema.parse(s)).toEqual(s);
  });

  it('does not fire when one condition fails', () => {
    const state = createSignalsState();
    const crowded = evaluateSignals(state, snap('tk_a', T0, { ...EARLY, unique_authors_1h: 7 }), recordingEmitter());
    expect(crowded.fired).toEqual([]);
    const { fired } = evaluateSignals(state, snap('tk_a', T0 + 5 * MIN, EARLY), recordingEmitter());
    expect(fired.map((s) => s.type)).toEqual(['EARLY_ACCELERATION']);
  });

  it('never lets a null value satisfy a condition, whatever the op', () => {
    for (const op of ['>', '>=', '<', '<='] as const) {
      const set = loadRuleSet([{ ...TEST_RULE, conditions: [{ field: 'early_quality', op, value: 50 }] }]);
      const { fired } = evaluateSignals(createSignalsState(), snap('tk_a', T0), recordingEmitter(), set);
      expect(fired, op).toEqual([]);
    }
    const set = loadRuleSet([{ ...TEST_RULE, conditions: [{ field: 'early_quality', op: '>=', value: 50 }] }]);
    const { fired } = evaluateSignals(createSignalsState(), snap('tk_a', T0, {}, { early_quality: 60 }), recordingEmitter(), set);
    expect(fired[0].conditions).toEqual([{ field: 'early_quality', op: '>=', measure: 'value', threshold: 50, actual: 60 }]);
    expect(fired[0].why).toEqual(['The early-quality score is 60 (at least 50)']);
  });

  it('reads a change condition against the token\'s previous snapshot, never against nothing', () => {
    const set = loadRuleSet([{ ...TEST_RULE, conditions: [{ field: 'unique_authors_1h', op: '>=', value: 2, measure: 'change' }] }]);
    const state = createSignalsState();
    const run = (tokenId: string, ts: number, authors: number | null) =>
      evaluateSignals(state, snap(tokenId, ts, { unique_authors_1h: authors }), recordingEmitter(), set).fired;
    expect(run('tk_a', T0, 9)).toEqual([]); // no previous snapshot
    expect(run('tk_b', T0, 1)).toEqual([]);
    expect(run('tk_a', T0 + 5 * MIN, 10)).toEqual([]); // +1
    expect(run('tk_a', T0 + 10 * MIN, null)).toEqual([]);
    expect(run('tk_a', T0 + 15 * MIN, 14)).toEqual([]); // previous was null
    const [s] = run('tk_a', T0 + 20 * MIN, 17); // +3 over tk_a's own previous, not tk_b's
    expect(s.conditions).toEqual([{ field: 'unique_authors_1h', op: '>=', measure: 'change', threshold: 2, actual: 3 }]);
    expect(s.why).toEqual(['Unique authors in the last hour changed by +3 since the previous snapshot (at least +2)']);
  });
});

describe('lifecycle', () => {
  function step(state: SignalsState, tokenId: string, minute: number, authors: number) {
    const emitter = recordingEmitter();
    const result = evaluateSignals(state, snap(tokenId, T0 + minute * MIN, { unique_authors_1h: authors }), emitter, TEST_SET);
    return { ...result, outputs: emitter.outputs };
  }

  it('does not re-fire while active, ends when the conditions lapse, and fires again after the cooldown', () => {
    const state = createSignalsState();
    const first = step(state, 'tk_a', 0, 6).fired[0];
    expect(first.ruleVersion).toBe('test_authors@2');
    expect(step(state, 'tk_a', 5, 9).fired).toEqual([]); // still holding: last held at minute 5
    expect(activeSignalsLookup(state).active('tk_a')).toEqual([
      { signalId: first.signalId, type: 'TEST_AUTHORS', ruleVersion: 'test_authors@2', firedAt: T0, strength: first.strength },
    ]);
    expect(step(state, 'tk_a', 10, 2)).toMatchObject({ fired: [], ended: [] });
    expect(step(state, 'tk_a', 30, 2)).toMatchObject({ fired: [], ended: [] });

    const lapse = step(state, 'tk_a', 35, 3); // 30 minutes after minute 5
    expect(lapse.ended).toEqual([{ ...first, status: 'ended', endedAt: T0 + 35 * MIN, endReason: 'conditions_lapsed', version: 2, ts: T0 + 35 * MIN }]);
    expect(lapse.outputs).toEqual([{ topic: SIGNAL_DRAFTS_TOPIC, key: 'tk_a', value: lapse.ended[0], timestamp: T0 + 35 * MIN }]);
    expect(activeSignalsLookup(state).active('tk_a')).toEqual([]);

    expect(step(state, 'tk_a', 40, 8).fired).toEqual([]); // cooldown until minute 95
    expect(step(state, 'tk_a', 90, 8).fired).toEqual([]);
    const again = step(state, 'tk_a', 95, 8).fired[0];
    expect(again.signalId).not.toBe(first.signalId);
    expect(again).toMatchObject({ firedAt: T0 + 95 * MIN, priorFirings: 1, priorSignalIds: [first.signalId], version: 1 });
  });

  it('ends at the maximum age even while the conditions keep holding', () => {
    const state = createSignalsState();
    const first = step(state, 'tk_a', 0, 6).fired[0];
    for (let m = 5; m < 120; m += 5) expect(step(state, 'tk_a', m, 6)).toMatchObject({ fired: [], ended: [] });
    const { fired, ended } = step(state, 'tk_a', 120, 6);
    expect(ended).toEqual([{ ...first, status: 'ended', endedAt: T0 + 120 * MIN, endReason: 'max_age', version: 2, ts: T0 + 120 * MIN }]);
    expect(fired).toEqual([]); // in its cooldown
  });

  it('ends a quiet token\'s signal at its end time when a later snapshot of any token arrives, whatever the token order', () => {
    const state = createSignalsState();
    const first = step(state, 'tk_a', 0, 6).fired[0];
    // Minute 30 is tk_a's end time: a snapshot of tk_a at 30 could still hold, so another token at 30 does not end it.
    expect(step(state, 'tk_b', 30, 1).ended).toEqual([]);
    const { ended } = step(state, 'tk_b', 35, 1);
    expect(ended).toEqual([{ ...first, status: 'ended', endedAt: T0 + 30 * MIN, endReason: 'conditions_lapsed', version: 2, ts: T0 + 30 * MIN }]);
    expect(step(state, 'tk_a', 40, 1).ended).toEqual([]);
  });

  it('keeps rules independent on one token', () => {
    const set = loadRuleSet([TEST_RULE, { ...TEST_RULE, name: 'test_many', type: 'TEST_MANY', conditions: [{ field: 'unique_authors_1h', op: '>=', value: 10 }] }]);
    const state = createSignalsState();
    const run = (minute: number, authors: number) =>
      evaluateSignals(state, snap('tk_a', T0 + minute * MIN, { unique_authors_1h: authors }), recordingEmitter(), set);
    expect(run(0, 6).fired.map((s) => s.type)).toEqual(['TEST_AUTHORS']);
    expect(run(5, 12).fired.map((s) => s.type)).toEqual(['TEST_MANY']);
    expect(activeSignalsLookup(state).active('tk_a').map((s) => s.type)).toEqual(['TEST_AUTHORS', 'TEST_MANY']);
  });

  it('keeps a signal that fires on the snapshot where the token\'s only other active signal ends', () => {
    // TEST_AUTHORS (first in the set) fires at 0 and lapses at 30; on that snapshot TEST_FEW fires.
    const few: SignalRule = { ...TEST_RULE, name: 'test_few', type: 'TEST_FEW', conditions: [{ field: 'unique_authors_1h', op: '<=', value: 2 }] };
    const set = loadRuleSet([TEST_RULE, few]);
    const state = createSignalsState();
    const run = (minute: number, authors: number) =>
      evaluateSignals(state, snap('tk_a', T0 + minute * MIN, { unique_authors_1h: authors }), recordingEmitter(), set);
    expect(run(0, 6).fired.map((s) => s.type)).toEqual(['TEST_AUTHORS']);
    const handover = run(30, 1);
    expect(handover.ended.map((s) => s.type)).toEqual(['TEST_AUTHORS']);
    expect(handover.fired.map((s) => s.type)).toEqual(['TEST_FEW']);
    expect(activeSignalsLookup(state).active('tk_a').map((s) => s.type)).toEqual(['TEST_FEW']);
    // It then ends like any other (lapse 30 minutes after it last held), and its cooldown holds.
    expect(run(65, 5).ended.map((s) => s.type)).toEqual(['TEST_FEW']);
    expect(run(70, 1).fired).toEqual([]);
  });
});

describe('determinism and records', () => {
  /** A seeded stream over a few tokens whose features wander in and out of the default rules' conditions. */
  function stream(): ScoredSnapshot[] {
    const rnd = seededRandom(42);
    const out: ScoredSnapshot[] = [];
    for (let i = 0; i < 600; i++) {
      const ts = T0 + i * 5 * MIN;
      for (const tokenId of ['tk_a', 'tk_b', 'tk_c', 'tk_d']) {
        if (rnd() < 0.2) continue; // tokens without news get no snapshot at some grid times
        const pick = (lo: number, hi: number) => (rnd() < 0.05 ? null : lo + rnd() * (hi - lo));
        out.push(
          snap(
            tokenId,
            ts,
            {
              quality_weighted_attention_1h: pick(0, 3),
              mention_velocity_1h: pick(0, 5),
              mention_velocity_15m: pick(0, 4),
              unique_authors_1h: Math.floor(rnd() * 14),
              unique_authors_24h: Math.floor(rnd() * 80),
              mentions_1h: Math.floor(rnd() * 14),
              mentions_15m: Math.floor(rnd() * 7),
              mentions_24h: Math.floor(rnd() * 120),
              new_author_share_1h: pick(0.5, 1),
              price_change_1h: pick(-0.1, 0.12),
              price_change_24h: pick(-0.2, 0.8),
              volume_acceleration: pick(0, 5),
            },
            { early_quality: pick(0, 100), crowding: pick(0, 100) },
          ),
        );
      }
    }
    return out;
  }

  function run(state: SignalsState, snaps: ScoredSnapshot[]) {
    const emitter = recordingEmitter();
    for (const s of snaps) evaluateSignals(state, s, emitter);
    return emitter.outputs;
  }

  it('gives the same outputs and ids for the same input, and continues identically after a checkpoint', () => {
    const snaps = stream();
    const once = run(createSignalsState(), snaps);
    const types = new Set(once.map((o) => (o.value as Signal).type));
    expect(types.size).toBeGreaterThanOrEqual(5); // the stream exercises most rules
    expect(once.some((o) => (o.value as Signal).status === 'ended')).toBe(true);
    expect(run(createSignalsState(), snaps)).toEqual(once);

    const half = Math.floor(snaps.length / 2);
    const state = createSignalsState();
    const before = run(state, snaps.slice(0, half));
    const restored = deserialize(serialize(state)) as SignalsState;
    expect([...before, ...run(restored, snaps.slice(half))]).toEqual(once);
  });

  it('emits records that round-trip through the Avro schema and the validator', () => {
    const type = avro.Type.forSchema(JSON.parse(readFileSync(join(import.meta.dirname, '../../../schemas/avro/signal/v1.avsc'), 'utf8')), {
      omitRecordMethods: true,
    });
    const outputs = run(createSignalsState(), stream());
    const fired = outputs.find((o) => (o.value as Signal).version === 1)!.value as Signal;
    const ended = outputs.find((o) => (o.value as Signal).version === 2)!.value as Signal;
    const withAnalogs = { ...fired, analogs: SUMMARY };
    for (const record of [fired, ended, withAnalogs]) {
      const back = type.fromBuffer(type.toBuffer(record));
      expect(back).toEqual(record);
      expect(SignalSchema.parse(back)).toEqual(record);
    }
    for (const o of outputs) expect(SignalSchema.safeParse(o.value).success).toBe(true);
  });

  it('refuses a record whose status and end fields disagree', () => {
    const [fired] = evaluateSignals(createSignalsState(), snap('tk_a', T0, EARLY), recordingEmitter()).fired;
    expect(SignalSchema.safeParse({ ...fired, endedAt: T0 + MIN }).success).toBe(false);
    expect(SignalSchema.safeParse({ ...fired, status: 'ended' }).success).toBe(false);
  });
});

describe('rule set', () => {
  const bad = (over: Partial<SignalRule>) => () => loadRuleSet([{ ...TEST_RULE, ...over }]);

  it('refuses unknown fields, ops and malformed rules at load', () => {
    expect(bad({ conditions: [{ field: 'unique_authors_2h' as FeatureName, op: '>=', value: 1 }] })).toThrow(/unknown field unique_authors_2h/);
    expect(bad({ conditions: [{ field: 'mentions_1h', op: '==' as '>=', value: 1 }] })).toThrow(RuleSetError);
    expect(bad({ conditions: [{ field: 'mentions_1h', op: '>=', value: Number.NaN }] })).toThrow(/finite/);
    expect(bad({ conditions: [] })).toThrow(/at least one condition/);
    expect(bad({ type: 'TestAuthors' })).toThrow(/upper snake case/);
    expect(bad({ version: 'v1' })).toThrow(/version/);
    expect(bad({ end: { lapseMinutes: 0, maxAgeMinutes: 10 } })).toThrow(/positive/);
    expect(bad({ end: { lapseMinutes: 30, maxAgeMinutes: 10 } })).toThrow(/lapse/);
    expect(() => loadRuleSet([TEST_RULE, { ...TEST_RULE, type: 'OTHER' }])).toThrow(/duplicate rule name/);
    expect(() => loadRuleSet([TEST_RULE, { ...TEST_RULE, name: 'other' }])).toThrow(/duplicate signal type/);
  });

  it('has a loaded rule behind every event-study slug and documents every rule', () => {
    const types = DEFAULT_RULE_SET.rules.map((r) => r.type);
    for (const type of Object.values(EVENT_STUDY_SIGNALS)) expect(types).toContain(type);
    expect(types).toContain('EARLY_ACCELERATION');
    expect(DEFAULT_RULE_SET.changeFields).toEqual(['unique_authors_1h']);
    const docs = signalRuleDocs();
    expect(docs.map((d) => d.ruleVersion)).toEqual(DEFAULT_RULE_SET.rules.map((r) => r.ruleVersion));
    expect(docs.find((d) => d.type === 'VELOCITY_3X')).toMatchObject({
      ruleVersion: 'velocity_3x@1',
      conditions: [
        { field: 'mention_velocity_1h', op: '>=', value: 3, measure: 'value' },
        { field: 'mentions_1h', op: '>=', value: 4, measure: 'value' },
      ],
      cooldownMinutes: 60,
    });
    expect(docs[0].end).toMatch(/60 minutes .* 360 minutes/);
  });
});
