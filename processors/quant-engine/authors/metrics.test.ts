import { describe, expect, it } from 'vitest';
import { wilsonInterval } from '../../stats/binomial.ts';
import { median, sampleStdev } from '../../stats/describe.ts';
import { computeMetrics, confidenceOf, researchScore, type CallRecord } from './metrics.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Monday 2024-01-01 00:00 UTC. */
const T0 = Date.UTC(2024, 0, 1);

function call(ts: number, forwardReturn: number | null, extra: Partial<CallRecord> = {}): CallRecord {
  return {
    callId: `call_${ts}`,
    tokenId: 'tk_a',
    narrative: 'ai-agents',
    ts,
    entryPrice: 1,
    resolvedAt: ts + DAY,
    forwardReturn,
    maxDrawdown: forwardReturn === null ? null : Math.min(0, forwardReturn),
    died: false,
    crowdAt: null,
    ...extra,
  };
}

describe('wilsonInterval', () => {
  it('matches published 95% Wilson score intervals', () => {
    // Reference values: Wilson (1927) / Newcombe (1998) table, z = 1.96.
    const half = wilsonInterval(5, 10)!;
    expect(half.low).toBeCloseTo(0.2366, 4);
    expect(half.high).toBeCloseTo(0.7634, 4);
    const none = wilsonInterval(0, 10)!;
    expect(none.low).toBe(0);
    expect(none.high).toBeCloseTo(0.2775, 4);
    const all = wilsonInterval(10, 10)!;
    expect(all.low).toBeCloseTo(0.7225, 4);
    expect(all.high).toBe(1);
    const one = wilsonInterval(1, 1)!;
    expect(one.low).toBeCloseTo(0.2065, 4);
    const newcombe = wilsonInterval(81, 263)!;
    expect(newcombe.low).toBeCloseTo(0.2553, 4);
    expect(newcombe.high).toBeCloseTo(0.3662, 4);
  });

  it('is null without trials', () => {
    expect(wilsonInterval(0, 0)).toBeNull();
  });
});

describe('median and sampleStdev', () => {
  it('take the middle or the mean of the two middles, and the n − 1 deviation', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
    expect(sampleStdev([2, 4, 4, 4, 5, 5, 7, 9])).toBeCloseTo(2.138, 3);
    expect(sampleStdev([1])).toBeNull();
  });
});

describe('computeMetrics', () => {
  it('defines hits as +10% over 24h on a live token and false positives as −20% or death', () => {
    const calls = [
      call(T0, 0.1),
      call(T0 + HOUR, 0.5, { died: true, forwardReturn: 0.5 }),
      call(T0 + 2 * HOUR, -0.2),
      call(T0 + 3 * HOUR, null, { died: true }),
      call(T0 + 4 * HOUR, 0.05),
    ];
    const m = computeMetrics(calls, T0 + 10 * DAY);
    expect(m.resolvedCalls).toBe(5);
    expect(m.hits).toBe(1);
    expect(m.hitRate).toBe(0.2);
    expect(m.falsePositiveRate).toBe(0.6);
    // The died token without a price counts as −1.
    expect(m.medianReturn24h).toBe(0.05);
  });

  it('uses only outcomes resolved before the as-of time and calls made before it', () => {
    const calls = [call(T0, 0.5), call(T0 + HOUR, -0.5), call(T0 + 2 * DAY, 0.3)];
    const asOf = T0 + DAY + HOUR; // the second resolves exactly at asOf: not yet known
    const m = computeMetrics(calls, asOf);
    expect(m.callsTotal).toBe(2);
    expect(m.resolvedCalls).toBe(1);
    expect(m.hitRate).toBe(1);
    expect(computeMetrics(calls, asOf + 1).resolvedCalls).toBe(2);
  });

  it('counts unpriced calls but never scores them', () => {
    const m = computeMetrics([call(T0, 0.5), call(T0 + HOUR, null, { entryPrice: null, resolvedAt: null })], T0 + 3 * DAY);
    expect(m).toMatchObject({ callsTotal: 2, callsUnpriced: 1, resolvedCalls: 1 });
  });

  it('gives sector strength only from 8 resolved calls in a narrative', () => {
    const seven = Array.from({ length: 7 }, (_, i) => call(T0 + i * HOUR, i < 4 ? 0.2 : -0.1));
    const other = Array.from({ length: 8 }, (_, i) => call(T0 + (20 + i) * HOUR, i < 2 ? 0.2 : 0, { narrative: 'memes' }));
    const below = computeMetrics([...seven, ...other], T0 + 5 * DAY);
    expect(below.sectorStrength.map((s) => s.narrative)).toEqual(['memes']);
    const eight = [...seven, call(T0 + 8 * HOUR, 0.3)];
    const at = computeMetrics([...eight, ...other], T0 + 5 * DAY);
    expect(at.sectorStrength.map((s) => s.narrative)).toEqual(['ai-agents', 'memes']);
    const ai = at.sectorStrength[0];
    expect(ai).toMatchObject({ narrative: 'ai-agents', samples: 8, hitRate: 5 / 8 });
    expect(ai.relativeHitRate).toBeCloseTo(5 / 8 - 7 / 16, 12);
  });

  it('measures lead time to the crowd, only for crowds known at the as-of time', () => {
    const calls = [
      call(T0, 0.2, { crowdAt: T0 + 2 * HOUR }),
      call(T0 + HOUR, 0.2, { crowdAt: T0 + HOUR }),
      call(T0 + 2 * HOUR, 0.2, { crowdAt: T0 + 6 * HOUR }),
      call(T0 + 3 * HOUR, 0.2, { crowdAt: T0 + 3 * DAY }),
      call(T0 + 4 * HOUR, 0.2),
    ];
    const m = computeMetrics(calls, T0 + 2 * DAY);
    expect(m.leadTimeSamples).toBe(3);
    expect(m.medianLeadTimeMs).toBe(2 * HOUR);
  });

  it('measures consistency as the share of active weeks at or above the overall hit rate, from 3 weeks', () => {
    const week = (w: number, returns: number[]) => returns.map((r, i) => call(T0 + w * 7 * DAY + i * HOUR, r));
    const two = computeMetrics([...week(0, [0.2, -0.1]), ...week(1, [0.2])], T0 + 30 * DAY);
    expect(two).toMatchObject({ consistency: null, activeWeeks: 2 });
    // Overall 4/8; weeks at 1/2, 2/2, 1/4 → two of three weeks at or above.
    const three = computeMetrics([...week(0, [0.2, -0.1]), ...week(1, [0.2, 0.3]), ...week(2, [0.2, 0, 0, 0])], T0 + 30 * DAY);
    expect(three.activeWeeks).toBe(3);
    expect(three.consistency).toBeCloseTo(2 / 3, 12);
  });

  it('grades confidence by resolved calls and says why it is not HIGH', () => {
    expect(confidenceOf(1)).toEqual({
      confidence: 'LOW',
      reason: 'only 1 resolved call; MEDIUM needs 10; a research score needs 3',
    });
    expect(confidenceOf(12)).toEqual({ confidence: 'MEDIUM', reason: '12 resolved calls; HIGH needs 30' });
    expect(confidenceOf(30)).toEqual({ confidence: 'HIGH', reason: null });
  });

  it('shrinks the research score: a short perfect record scores below a long strong one', () => {
    const perfect3 = Array.from({ length: 3 }, (_, i) => call(T0 + i * HOUR, 0.5));
    const strong40 = Array.from({ length: 40 }, (_, i) => call(T0 + i * HOUR, i % 10 < 7 ? 0.5 : -0.1));
    expect(researchScore(perfect3)).toBeLessThan(researchScore(strong40));
    expect(researchScore([])).toBeCloseTo(42.5, 1);
  });
});
