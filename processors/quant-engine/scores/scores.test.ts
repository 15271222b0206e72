import { beforeAll, describe, expect, it } from 'vitest';
import type { FeatureSnapshot } from '../../../schemas/records/quant-market.ts';
import { SCORE_NAMES, type ScoreDetail, type ScoredSnapshot, type ScoreName } from '../contracts.ts';
import { FEATURE_NAMES, type FeatureVector } from '../features/definitions.ts';
import { mention } from '../authors/test-support.ts';
import { MODEL_VERSIONS, SCORE_MODELS, SCORE_STEP } from './models.ts';
import { scoreSnapshot, type ScoreContext } from './scores.ts';
import { createSmartCohortState, smartCohortLookup, smartMoneyOnMention } from './smart-cohort.ts';
import { scoredHistory, type ScoredHistory } from './test-support.ts';
import { seededRandom } from '../../../infra/feeds/sim/prng.ts';

const T0 = Date.UTC(2026, 2, 5, 12);
const HOUR = 3_600_000;

/** A quiet token with a day of market data and some chatter; override what a test needs. */
function features(overrides: Partial<FeatureVector> = {}): FeatureVector {
  return {
    mentions_15m: 1,
    mentions_1h: 4,
    mentions_6h: 20,
    mentions_24h: 96,
    unique_authors_15m: 1,
    unique_authors_1h: 4,
    unique_authors_6h: 12,
    unique_authors_24h: 30,
    mention_velocity_15m: 1,
    mention_velocity_1h: 1,
    new_author_share_1h: 0.25,
    quality_weighted_attention_1h: 1.6,
    engagement_1h: 200,
    engagement_24h: 4800,
    price_usd: 1.5,
    price_change_15m: 0,
    price_change_1h: 0,
    price_change_24h: 0,
    volume_1h: 1000,
    volume_24h: 24_000,
    volume_acceleration: 1,
    liquidity_usd: 250_000,
    market_cap_usd: 5_000_000,
    trades_1h: 40,
    narrative_share: 0.1,
    late_events_24h: 0,
    ...overrides,
  };
}

function snapshot(f: FeatureVector, market = true): FeatureSnapshot {
  return {
    snapshotId: 'snap_0a1b2c',
    tokenId: 'tk_abc',
    ts: T0,
    symbol: 'ABC',
    chain: 'solana',
    narrative: 'ai-agents',
    featureVersion: 'features@2',
    features: f,
    priceUsd: market ? f.price_usd : null,
    marketLastAt: market ? T0 - 60_000 : null,
    sourceLastEventAt: T0 - 120_000,
  };
}

function context(opts: { shareChange?: number | null; cohortSize?: number; memberMentions?: [string, number][] } = {}): ScoreContext {
  const smart = createSmartCohortState();
  for (const [author, ts] of opts.memberMentions ?? []) smartMoneyOnMention(smart, mention(author, 'tk_abc', ts), true);
  return {
    smartCohort: smartCohortLookup(smart, () => opts.cohortSize ?? 20),
    narratives: { attentionShareChange24h: () => (opts.shareChange === undefined ? 0 : opts.shareChange) },
  };
}

const detail = (s: ScoredSnapshot, name: ScoreName): ScoreDetail => s.details.find((d) => d.score === name)!;

/** Breaches of the invariants every score detail keeps, whatever the inputs (plain checks: fast over thousands). */
function problems(s: ScoredSnapshot): string[] {
  const out: string[] = [];
  const fail = (d: ScoreDetail, what: string) => out.push(`${s.snapshotId} ${d.score}: ${what}`);
  if (s.details.map((d) => d.score).join() !== SCORE_NAMES.join()) out.push(`${s.snapshotId}: details out of order`);
  for (const d of s.details) {
    if (s.scores[d.score] !== d.value) fail(d, 'plain score differs from the detail');
    if (d.modelVersion !== MODEL_VERSIONS[d.score]) fail(d, `model version ${d.modelVersion}`);
    if (d.value === null) {
      if (!d.reason) fail(d, 'null without a reason');
      if (d.drivers.length > 0) fail(d, 'null with drivers');
      continue;
    }
    if (d.value < 0 || d.value > 100) fail(d, `out of range: ${d.value}`);
    // Exactly, in either order of summation.
    if (d.drivers.reduce((sum, x) => sum + x.contribution, 0) !== d.value) fail(d, 'drivers do not sum to the value');
    if (d.drivers.reduceRight((sum, x) => sum + x.contribution, 0) !== d.value) fail(d, 'drivers summed backwards differ');
    const documented = SCORE_MODELS[d.score].drivers.map((x) => x.name);
    for (const x of d.drivers) {
      if (!Number.isInteger(x.contribution / SCORE_STEP) || Object.is(x.contribution, -0)) fail(d, `${x.name} = ${x.contribution}`);
      if (!documented.includes(x.name)) fail(d, `undocumented driver ${x.name}`);
    }
    if ((d.confidence === 'HIGH') !== (d.reason === null)) fail(d, `confidence ${d.confidence} with reason ${d.reason}`);
  }
  return out;
}

describe('scores over a simulated history', () => {
  let history: ScoredHistory;
  beforeAll(() => {
    history = scoredHistory({ seed: 7, tokens: 20, authors: 200, days: 2 });
  });

  it('keeps every driver sum exact, every null explained, for every score of every snapshot', () => {
    expect(history.pairs.length).toBeGreaterThan(5000);
    expect(history.pairs.flatMap((p) => problems(p.scored))).toEqual([]);
    // The run exercises values, not just nulls, of every score the sim can feed in two days.
    for (const name of ['momentum', 'conviction', 'crowding', 'early_quality', 'narrative_velocity', 'divergence'] as const) {
      const values = history.pairs.map((p) => p.scored.scores[name]).filter((v) => v !== null);
      expect(values.length, name).toBeGreaterThan(1000);
      expect(Math.max(...values) - Math.min(...values), name).toBeGreaterThan(20);
    }
    // No author has a MEDIUM research score within two days: the cohort is empty and says so.
    expect(history.maxCohortSize).toBe(0);
    for (const { scored } of history.pairs) expect(detail(scored, 'smart_cohort').reason).toMatch(/no members yet/);
  });

  it('passes the feature snapshot through by id, token and time', () => {
    const { feature, scored } = history.pairs[history.pairs.length - 1];
    expect([scored.snapshotId, scored.tokenId, scored.ts]).toEqual([feature.snapshotId, feature.tokenId, feature.ts]);
    expect(scored.features).toEqual(feature.features);
  });
});

describe('scores over random feature vectors', () => {
  it('keeps every invariant, with random nulls and side inputs', () => {
    const r = seededRandom(42);
    const found: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const f = features();
      for (const name of FEATURE_NAMES) {
        const roll = r();
        f[name] = roll < 0.15 ? null : roll < 0.25 ? 0 : name.startsWith('price_change') ? (r() - 0.4) * 3 : r() * 10 ** Math.floor(r() * 5);
      }
      const size = Math.floor(r() * 25);
      const members: [string, number][] = Array.from({ length: Math.floor(r() * 30) }, (_, k) => [`au_${k % 9}`, T0 - Math.floor(r() * 30 * HOUR)]);
      const ctx = context({ shareChange: r() < 0.3 ? null : r() - 0.5, cohortSize: size, memberMentions: members });
      found.push(...problems(scoreSnapshot(snapshot(f, f.price_usd !== null), ctx)));
    }
    expect(found).toEqual([]);
  });
});

describe('score models', () => {
  it('gives full momentum when price, volume and attention all run at their full scale', () => {
    const s = scoreSnapshot(
      snapshot(features({ price_change_1h: 0.12, price_change_24h: 0.8, volume_acceleration: 4, mention_velocity_1h: 3 })),
      context(),
    );
    expect(detail(s, 'momentum')).toMatchObject({ value: 100, confidence: 'HIGH', reason: null });
    expect(detail(s, 'momentum').drivers).toEqual([
      { name: 'price_change_1h', contribution: 35 },
      { name: 'price_change_24h', contribution: 20 },
      { name: 'volume_acceleration', contribution: 20 },
      { name: 'mention_velocity_1h', contribution: 25 },
    ]);
  });

  it('spreads a missing optional input over the others and says so in the confidence', () => {
    const s = scoreSnapshot(snapshot(features({ price_change_1h: 0.1, price_change_24h: null, volume_acceleration: 3, mention_velocity_1h: 3 })), context());
    const m = detail(s, 'momentum');
    expect(m.value).toBe(100);
    expect(m.drivers.map((d) => d.name)).toEqual(['price_change_1h', 'volume_acceleration', 'mention_velocity_1h']);
    expect(m.confidence).toBe('MEDIUM');
    expect(m.reason).toBe('price_change_24h unavailable (less than 24h of price history)');
  });

  it('treats no volume as a real 0, not as missing', () => {
    const m = detail(scoreSnapshot(snapshot(features({ volume_acceleration: null, volume_1h: 0, volume_24h: 0 })), context()), 'momentum');
    expect(m.drivers.find((d) => d.name === 'volume_acceleration')?.contribution).toBe(0);
    expect(m.confidence).toBe('HIGH');
  });

  it('nulls momentum and divergence without an hour of price history, with the reason', () => {
    const s = scoreSnapshot(snapshot(features({ price_change_1h: null, price_change_24h: null })), context());
    expect(detail(s, 'momentum')).toMatchObject({ value: null, reason: 'less than 1h of price history' });
    expect(detail(s, 'divergence')).toMatchObject({ value: null, reason: 'less than 1h of price history' });
  });

  it('scores the social side of a token with no market data', () => {
    const f = features({
      price_usd: null,
      price_change_15m: null,
      price_change_1h: null,
      price_change_24h: null,
      volume_1h: null,
      volume_24h: null,
      volume_acceleration: null,
      liquidity_usd: null,
      market_cap_usd: null,
      trades_1h: null,
    });
    const s = scoreSnapshot(snapshot(f, false), context());
    expect(s.scores.momentum).toBeNull();
    expect(detail(s, 'momentum').reason).toBe('no market data yet');
    expect(s.scores.divergence).toBeNull();
    expect(s.divergenceState).toBe('none');
    for (const name of ['conviction', 'crowding', 'early_quality', 'narrative_velocity', 'smart_cohort'] as const) expect(s.scores[name], name).not.toBeNull();
    expect(detail(s, 'crowding')).toMatchObject({ confidence: 'MEDIUM', reason: 'price_change_24h unavailable (no market data yet)' });
  });

  it('nulls conviction and early quality without the attention they judge', () => {
    const s = scoreSnapshot(
      snapshot(features({ mentions_1h: 0, mentions_24h: 0, unique_authors_1h: 0, unique_authors_24h: 0, mention_velocity_1h: null, new_author_share_1h: null })),
      context(),
    );
    expect(detail(s, 'conviction').reason).toMatch(/no mentions in the last 24h/);
    expect(detail(s, 'early_quality').reason).toBe('no authors mentioned the token in the last hour');
    // Nobody there is a real 0 crowding.
    expect(s.scores.crowding).toBe(0);
  });

  it('rates early quality high for good authors before the crowd, and lower once the crowd is in', () => {
    const early = scoreSnapshot(snapshot(features({ unique_authors_1h: 4, quality_weighted_attention_1h: 3.6, unique_authors_24h: 5 })), context());
    const late = scoreSnapshot(snapshot(features({ unique_authors_1h: 40, quality_weighted_attention_1h: 12, unique_authors_24h: 150 })), context());
    expect(early.scores.early_quality!).toBeGreaterThan(80);
    expect(late.scores.early_quality!).toBeLessThan(30);
    expect(late.scores.crowding!).toBeGreaterThan(early.scores.crowding!);
  });

  it('signs divergence around 50 and derives the divergence state from it', () => {
    const state = (velocity: number, change: number) => {
      const s = scoreSnapshot(snapshot(features({ mention_velocity_1h: velocity, price_change_1h: change })), context());
      return [s.scores.divergence, s.divergenceState];
    };
    expect(state(4, 0)).toEqual([75, 'social_leading']);
    expect(state(1, 0.1)).toEqual([25, 'price_leading']);
    expect(state(4, 0.1)).toEqual([50, 'aligned']);
    expect(state(1, 0)).toEqual([50, 'none']);
    // Price falling while social is flat is a gap, but no lead.
    expect(state(1, -0.1)).toEqual([75, 'none']);
    const d = detail(scoreSnapshot(snapshot(features({ mention_velocity_1h: 2, price_change_1h: 0.03 })), context()), 'divergence');
    expect(d.drivers).toEqual([
      { name: 'baseline', contribution: 50 },
      { name: 'mention_velocity_1h', contribution: 12.5 },
      { name: 'price_change_1h', contribution: -7.5 },
    ]);
  });

  it('drops narrative velocity to LOW confidence without the share change, and rises with it', () => {
    const f = snapshot(features({ narrative_share: 0.2 }));
    expect(detail(scoreSnapshot(f, context({ shareChange: null })), 'narrative_velocity')).toMatchObject({
      value: 80,
      confidence: 'LOW',
      reason: 'narrative_share_change_24h unavailable (needs 48h of narrative history)',
    });
    const rising = scoreSnapshot(f, context({ shareChange: 0.05 })).scores.narrative_velocity!;
    const falling = scoreSnapshot(f, context({ shareChange: -0.05 })).scores.narrative_velocity!;
    expect([rising, falling]).toEqual([92, 32]);
  });

  it('counts the cohort members of the last 24h, relative to the cohort size', () => {
    const f = snapshot(features());
    const members: [string, number][] = [
      ['au_1', T0 - HOUR],
      ['au_1', T0 - 2 * HOUR],
      ['au_2', T0 - 23 * HOUR],
      ['au_3', T0 - 25 * HOUR], // outside the window
    ];
    const d = detail(scoreSnapshot(f, context({ cohortSize: 20, memberMentions: members })), 'smart_cohort');
    // 2 of 20 members is 0.1 / 0.25 of full breadth; 3 mentions on a log scale to 20.
    expect(d.drivers[0]).toEqual({ name: 'top_research_members_24h', contribution: 28 });
    expect(d.value).toBe(28 + d.drivers[1].contribution);
    expect(d.confidence).toBe('HIGH');
    expect(detail(scoreSnapshot(f, context({ cohortSize: 4, memberMentions: members })), 'smart_cohort')).toMatchObject({
      value: 70 + d.drivers[1].contribution,
      confidence: 'LOW',
      reason: 'only 4 members in cohort_top-research',
    });
    expect(detail(scoreSnapshot(f, context({ cohortSize: 0 })), 'smart_cohort')).toMatchObject({ value: null, reason: expect.stringMatching(/no members yet/) });
  });

  it('documents every score with a version and drivers whose points add to 100', () => {
    for (const name of SCORE_NAMES) {
      const doc = SCORE_MODELS[name];
      expect(doc.score).toBe(name);
      expect(doc.modelVersion).toBe(`${name}@1`);
      expect(doc.drivers.reduce((s, d) => s + d.maxPoints, 0), name).toBe(100);
      expect(doc.nullWhen.length, name).toBeGreaterThan(0);
    }
    expect(MODEL_VERSIONS).toMatchObject({ features: 'features@2', analogs: 'analog-v1.0' });
  });
});

describe('smart cohort state', () => {
  it('ignores non-members and reads only the window ending at the snapshot time', () => {
    const state = createSmartCohortState();
    smartMoneyOnMention(state, mention('au_1', 'tk_abc', T0 - HOUR), true);
    smartMoneyOnMention(state, mention('au_2', 'tk_abc', T0 - HOUR), false);
    smartMoneyOnMention(state, mention('au_3', 'tk_abc', T0 + HOUR), true);
    const lookup = smartCohortLookup(state, () => 7);
    expect(lookup.activity('tk_abc', T0)).toEqual({ mentions24h: 1, members24h: 1, cohortSize: 7 });
    expect(lookup.activity('tk_abc', T0 + 23 * HOUR)).toEqual({ mentions24h: 1, members24h: 1, cohortSize: 7 });
    expect(lookup.activity('tk_other', T0)).toEqual({ mentions24h: 0, members24h: 0, cohortSize: 7 });
  });

  it('forgets mentions a day older than a new one', () => {
    const state = createSmartCohortState();
    smartMoneyOnMention(state, mention('au_1', 'tk_abc', T0), true);
    smartMoneyOnMention(state, mention('au_1', 'tk_abc', T0 + 24 * HOUR), true);
    expect(state.tokens.get('tk_abc')!.map((e) => e.ts)).toEqual([T0 + 24 * HOUR]);
  });
});
