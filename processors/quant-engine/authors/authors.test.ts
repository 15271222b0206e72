import { describe, expect, it } from 'vitest';
import { AuthorCallSchema, AuthorMetricsSchema, type AuthorCall, type AuthorMetrics } from '../../../schemas/records/quant-social.ts';
import type { Mention, OutcomeResolution, OutcomeSubject, PriceLookup } from '../contracts.ts';
import {
  advanceTo,
  AUTHOR_METRICS_TOPIC,
  authorDirectory,
  authorQuality,
  CALLS_TOPIC,
  createAuthorsState,
  crowdLookup,
  onMention,
  onOutcome,
  type AuthorsState,
} from './authors.ts';
import { checkpointed, expectConforms, mention, recordingEmitter, tokenLookup, type RecordingEmitter } from './test-support.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** Monday 2024-01-01 00:00 UTC. */
const T0 = Date.UTC(2024, 0, 1);

const tokens = tokenLookup({
  tk_a: { narrative: 'ai-agents' },
  tk_b: { narrative: 'memes' },
  tk_nop: { narrative: 'memes' },
});
const prices: PriceLookup = { lastPrice: (id) => (id === 'tk_nop' ? null : 2) };

/** Drives the module as the engine does: advance to each event's time, then apply it. */
class Harness {
  state: AuthorsState = createAuthorsState();
  readonly out: RecordingEmitter = recordingEmitter();

  mention(m: Mention): OutcomeSubject | null {
    advanceTo(this.state, m.ts, this.out);
    return onMention(this.state, m, this.out, tokens, prices);
  }
  resolve(subject: OutcomeSubject, forwardReturn: number | null, died = false, resolvedAt = subject.ts + DAY): void {
    advanceTo(this.state, resolvedAt, this.out);
    onOutcome(this.state, resolution(subject, forwardReturn, died, resolvedAt));
  }
  advance(t: number): void {
    advanceTo(this.state, t, this.out);
  }
  metrics(authorId?: string): AuthorMetrics[] {
    return this.out.values<AuthorMetrics>(AUTHOR_METRICS_TOPIC).filter((m) => authorId === undefined || m.authorId === authorId);
  }
}

function resolution(subject: OutcomeSubject, forwardReturn: number | null, died: boolean, resolvedAt: number): OutcomeResolution {
  return {
    subject,
    horizon: '24h',
    resolvedAt,
    forwardReturn,
    maxDrawdown: forwardReturn === null ? -1 : Math.min(0, forwardReturn),
    peakReturn: forwardReturn === null ? 0 : Math.max(0, forwardReturn),
    timeToPeakMs: null,
    died,
    lastPrice: forwardReturn === null ? null : 2 * (1 + forwardReturn),
  };
}

describe('calls', () => {
  it('are the first mention of a token and the first after 7 days without mentioning it', () => {
    const h = new Harness();
    const first = h.mention(mention('au_1', 'tk_a', T0));
    expect(h.mention(mention('au_1', 'tk_a', T0 + 6 * DAY))).toBeNull();
    // The gap counts from the last mention, not from the call.
    expect(h.mention(mention('au_1', 'tk_a', T0 + 12 * DAY))).toBeNull();
    expect(h.mention(mention('au_1', 'tk_a', T0 + 19 * DAY - 1))).toBeNull();
    const again = h.mention(mention('au_1', 'tk_a', T0 + 26 * DAY - 1));
    expect(first).toMatchObject({ kind: 'call', tokenId: 'tk_a', ts: T0, entryPrice: 2 });
    expect(again).toMatchObject({ kind: 'call', ts: T0 + 26 * DAY - 1 });
    const calls = h.out.values<AuthorCall>(CALLS_TOPIC);
    expect(calls.map((c) => c.ts)).toEqual([T0, T0 + 26 * DAY - 1]);
    expect(calls[0]).toMatchObject({ authorId: 'au_1', handle: 'h_au_1', tokenId: 'tk_a', narrative: 'ai-agents', entryPrice: 2 });
    expect(calls[0].callId).toBe(first!.subjectId);
    expect(h.out.outputs.find((o) => o.topic === CALLS_TOPIC)).toMatchObject({ key: 'au_1', timestamp: T0 });
    for (const c of calls) expectConforms('author-call', AuthorCallSchema, c);
  });

  it('start their outcome at the current event time, in order, when a post arrives slightly late', () => {
    const h = new Harness();
    h.mention(mention('au_1', 'tk_a', T0 + 2 * MIN));
    const late = h.mention(mention('au_2', 'tk_b', T0 + MIN))!;
    expect(late.ts).toBe(T0 + 2 * MIN);
    expect(h.out.values<AuthorCall>(CALLS_TOPIC).map((c) => c.ts)).toEqual([T0 + 2 * MIN, T0 + MIN]);
  });

  it('have the same ids on replay', () => {
    const run = () => {
      const h = new Harness();
      h.mention(mention('au_1', 'tk_a', T0, 'p1'));
      return h.out.values<AuthorCall>(CALLS_TOPIC)[0].callId;
    };
    expect(run()).toBe(run());
  });

  it('without a price are emitted and counted but not scored', () => {
    const h = new Harness();
    expect(h.mention(mention('au_1', 'tk_nop', T0))).toBeNull();
    const subject = h.mention(mention('au_1', 'tk_a', T0 + MIN))!;
    expect(h.out.values<AuthorCall>(CALLS_TOPIC)[0].entryPrice).toBeNull();
    h.resolve(subject, 0.3);
    h.advance(T0 + DAY + HOUR);
    expect(h.metrics('au_1')[0]).toMatchObject({ callsTotal: 2, callsUnpriced: 1, resolvedCalls: 1 });
  });
});

describe('author metrics', () => {
  it('for an author with one call: what one sample allows, nulls elsewhere, LOW confidence', () => {
    const h = new Harness();
    const subject = h.mention(mention('au_1', 'tk_a', T0 + 10 * MIN))!;
    h.resolve(subject, 0.25);
    // Resolved at T0 + 24h10m; published at the next hour's start.
    h.advance(T0 + DAY + 59 * MIN);
    expect(h.metrics()).toEqual([]);
    h.advance(T0 + DAY + HOUR);
    const [m] = h.metrics('au_1');
    expect(m).toMatchObject({
      authorId: 'au_1',
      handle: 'h_au_1',
      ts: T0 + DAY + HOUR,
      version: 1,
      callsTotal: 1,
      resolvedCalls: 1,
      hits: 1,
      hitRate: 1,
      hitRateHigh: 1,
      falsePositiveRate: 0,
      medianReturn24h: 0.25,
      leadTimeSamples: 0,
      medianLeadTimeMs: null,
      consistency: null,
      outcomeVolatility: null,
      sectorStrength: [],
      researchScore: null,
      confidence: 'LOW',
    });
    expect(m.hitRateLow).toBeCloseTo(0.2065, 4);
    expect(m.confidenceReason).toMatch(/only 1 resolved call/);
    expectConforms('author-metrics', AuthorMetricsSchema, m);
    expect(h.out.outputs.find((o) => o.topic === AUTHOR_METRICS_TOPIC)).toMatchObject({ key: 'au_1', timestamp: T0 + DAY + HOUR });
    expect(authorQuality(h.state).researchScore('au_1')).toBeNull();
  });

  it('never use an outcome resolved after the version time, even when delivered before it is published', () => {
    const h = new Harness();
    const a = h.mention(mention('au_1', 'tk_a', T0 + 50 * MIN))!;
    const b = h.mention(mention('au_1', 'tk_b', T0 + 55 * MIN))!;
    h.resolve(a, 0.5); // resolved at T0+24h50m
    // The outcomes module hands over a resolution of T0+25h05m while the authors module
    // has not yet entered that hour: the version as of T0+25h must leave it out.
    onOutcome(h.state, resolution(b, -0.5, false, T0 + DAY + HOUR + 5 * MIN));
    h.advance(T0 + DAY + HOUR + 6 * MIN);
    h.advance(T0 + DAY + 2 * HOUR);
    expect(h.metrics('au_1').map((v) => [v.ts, v.resolvedCalls, v.hitRate])).toEqual([
      [T0 + DAY + HOUR, 1, 1],
      [T0 + DAY + 2 * HOUR, 2, 0.5],
    ]);
  });

  it('are published at most once per event-time hour per author, and only after new outcomes', () => {
    const h = new Harness();
    const subjects = [0, 5, 10, 15].map((m) => h.mention(mention('au_1', `tk_${'abab'[m / 5]}`, T0 + m * MIN, `p_${m}`)));
    const distinct = subjects.filter((s): s is OutcomeSubject => s !== null);
    expect(distinct).toHaveLength(2);
    for (const s of distinct) h.resolve(s, 0.2);
    h.advance(T0 + DAY + HOUR);
    h.advance(T0 + DAY + 3 * HOUR);
    expect(h.metrics('au_1').map((m) => m.version)).toEqual([1]);
  });

  it('measure lead time from a call to the first crowd of 10 unique authors within an hour', () => {
    const h = new Harness();
    const early = h.mention(mention('au_early', 'tk_a', T0))!;
    // Nine others within an hour, three hours later: with a repeat, still nine unique.
    for (let i = 0; i < 9; i++) h.mention(mention(`au_c${i}`, 'tk_a', T0 + 3 * HOUR + i * MIN));
    h.mention(mention('au_c0', 'tk_a', T0 + 3 * HOUR + 20 * MIN));
    expect(crowdLookup(h.state).uniqueAuthors1h('tk_a')).toBe(9);
    // au_early's own earlier mention left the trailing hour, so it takes a tenth author.
    h.mention(mention('au_late', 'tk_a', T0 + 3 * HOUR + 30 * MIN));
    expect(crowdLookup(h.state).uniqueAuthors1h('tk_a')).toBe(10);
    h.resolve(early, 0.3);
    h.advance(T0 + 2 * DAY);
    expect(h.metrics('au_early')[0]).toMatchObject({ leadTimeSamples: 1, medianLeadTimeMs: 3 * HOUR + 30 * MIN });
    // The tenth author called into the crowd: lead time 0.
    expect(h.metrics('au_late')[0]).toMatchObject({ leadTimeSamples: 1, medianLeadTimeMs: 0 });
  });

  it('leave out calls whose crowd came later than 7 days', () => {
    const h = new Harness();
    const subject = h.mention(mention('au_1', 'tk_a', T0))!;
    h.resolve(subject, 0.3);
    for (let i = 0; i < 10; i++) h.mention(mention(`au_c${i}`, 'tk_a', T0 + 7 * DAY + HOUR + i * MIN));
    h.advance(T0 + 9 * DAY);
    expect(h.metrics('au_1').at(-1)).toMatchObject({ leadTimeSamples: 0, medianLeadTimeMs: null });
  });

  it('feed the author directory and quality lookup from the latest published version only', () => {
    const h = new Harness();
    const subjects = Array.from({ length: 4 }, (_, i) => h.mention(mention('au_1', `tk_${i}`, T0 + i * MIN))!);
    for (const s of subjects.slice(0, 3)) h.resolve(s, 0.4);
    h.advance(T0 + DAY + HOUR);
    const published = h.metrics('au_1')[0].researchScore;
    expect(published).not.toBeNull();
    h.resolve(subjects[3], -0.9, true);
    expect(authorQuality(h.state).researchScore('au_1')).toBe(published);
    expect(authorDirectory(h.state).byHandle('@H_AU_1')).toMatchObject({ authorId: 'au_1', researchScore: published });
    h.advance(T0 + DAY + 2 * HOUR);
    const next = h.metrics('au_1')[1].researchScore!;
    expect(next).toBeLessThan(published!);
    expect(authorQuality(h.state).researchScore('au_1')).toBe(next);
    expect(authorQuality(h.state).researchScore('au_unknown')).toBeNull();
  });
});

describe('state', () => {
  it('survives a checkpoint round trip mid-stream with identical outputs', () => {
    const run = (restoreAt: number | null) => {
      const h = new Harness();
      const subjects: OutcomeSubject[] = [];
      for (let i = 0; i < 12; i++) {
        if (i === restoreAt) h.state = checkpointed(h.state);
        const s = h.mention(mention(`au_${i % 3}`, `tk_${i % 5}`, T0 + i * 20 * MIN, `p_${i}`));
        if (s) subjects.push(s);
      }
      for (const [i, s] of subjects.entries()) {
        if (i === restoreAt) h.state = checkpointed(h.state);
        h.resolve(s, i % 2 === 0 ? 0.2 : -0.3);
      }
      h.advance(T0 + 3 * DAY);
      return JSON.stringify(h.out.outputs);
    };
    const straight = run(null);
    expect(straight).toContain(AUTHOR_METRICS_TOPIC);
    expect(run(5)).toBe(straight);
  });
});

describe('recovery of planted author types', () => {
  it('ranks early-and-right above late followers above shills', () => {
    // A deterministic LCG keeps the synthetic outcomes noisy but replayable.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `au_${prefix}${i}`);
    const early = ids('early', 3);
    const followers = ids('follow', 12);
    const shills = ids('shill', 3);
    const plan: { m: Mention; r: number | null; died: boolean }[] = [];
    for (let k = 0; k < 40; k++) {
      const t = T0 + k * 6 * HOUR;
      const breakout = random() < 0.7;
      // Early authors call a pump about 3h before the crowd; followers are the crowd.
      for (const a of early) {
        plan.push({ m: mention(a, `tk_p${k}`, t + Math.floor(random() * 10) * MIN), r: breakout ? 0.3 + random() : -0.15 * random(), died: false });
      }
      for (const [i, a] of followers.entries()) {
        plan.push({ m: mention(a, `tk_p${k}`, t + 3 * HOUR + i * MIN), r: breakout ? -0.1 + 0.25 * random() : -0.3 * random(), died: false });
      }
      // Shills push tokens that mostly die.
      for (const a of shills) {
        const died = random() < 0.6;
        plan.push({ m: mention(a, `tk_r${k}`, t + 30 * MIN + Math.floor(random() * 60) * MIN), r: died ? null : -0.4 + 0.5 * random(), died });
      }
    }
    plan.sort((a, b) => a.m.ts - b.m.ts);

    // Replay in event-time order, resolving each call 24h after it, as the engine would.
    const h = new Harness();
    const due: { subject: OutcomeSubject; r: number | null; died: boolean }[] = [];
    const resolveUntil = (t: number) => {
      while (due.length > 0 && due[0].subject.ts + DAY <= t) {
        const { subject, r, died } = due.shift()!;
        h.resolve(subject, r, died);
      }
    };
    for (const { m, r, died } of plan) {
      resolveUntil(m.ts);
      due.push({ subject: h.mention(m)!, r, died });
    }
    resolveUntil(T0 + 30 * DAY);
    h.advance(T0 + 30 * DAY);

    const quality = authorQuality(h.state);
    const scores = (group: string[]) => group.map((a) => quality.researchScore(a)!);
    expect(Math.min(...scores(early))).toBeGreaterThan(Math.max(...scores(followers)));
    expect(Math.min(...scores(followers))).toBeGreaterThan(Math.max(...scores(shills)));
    const latest = (id: string) => h.metrics(id).at(-1)!;
    expect(latest('au_early0')).toMatchObject({ confidence: 'HIGH', resolvedCalls: 40 });
    expect(latest('au_early0').medianLeadTimeMs).toBeGreaterThanOrEqual(2 * HOUR);
    expect(latest('au_follow5').medianLeadTimeMs).toBeLessThan(HOUR);
  });
});
