import { describe, expect, it } from 'vitest';
import type { MarketTick } from '../../../schemas/records.ts';
import { OUTCOME_HORIZONS, OutcomeSchema, type Outcome } from '../../../schemas/records/quant-market.ts';
import { HORIZON_MS, HORIZONS, type OutcomeResolution, type OutcomeSubject } from '../contracts.ts';
import { advance, createPipeline, feed } from '../features/pipeline-fixture.ts';
import { avroRoundTrip, HOUR, MIN, recordingEmitter, seededRandom, T0, tick, tokenMeta } from '../tokens/fixtures.ts';
import {
  advanceOutcomes,
  createOutcomesState,
  DIED_LIQUIDITY_FRACTION,
  outcomesOnTick,
  outcomesOnTokenMeta,
  OUTCOMES_TOPIC,
  refusedSubjects,
  trackSubject,
  type OutcomesState,
} from './outcomes.ts';

const DAY = 24 * HOUR;

function subject(ts: number, entryPrice: number, over: Partial<OutcomeSubject> = {}): OutcomeSubject {
  return { kind: 'call', subjectId: `call_${ts}`, tokenId: 'tk_1', ts, entryPrice, ...over };
}

/** Drives the module as the engine does: resolve what is due before each tick, then apply it. */
function ticks(state: OutcomesState, list: MarketTick[], emitter = recordingEmitter()): OutcomeResolution[] {
  const out: OutcomeResolution[] = [];
  for (const t of list) {
    out.push(...advanceOutcomes(state, t.ts, emitter));
    outcomesOnTick(state, t);
  }
  return out;
}

function at(resolutions: OutcomeResolution[], horizon: string): OutcomeResolution {
  const r = resolutions.find((x) => x.horizon === horizon);
  if (!r) throw new Error(`no ${horizon} resolution`);
  return r;
}

describe('outcomes', () => {
  it('uses the contract horizons in its record schema', () => {
    expect(OUTCOME_HORIZONS).toEqual(HORIZONS);
  });

  it('resolves a horizon only once event time has passed ts + h, over the ticks in (ts, ts + h]', () => {
    const state = createOutcomesState();
    const emitter = recordingEmitter();
    ticks(state, [tick('tk_1', T0, 10)], emitter);
    trackSubject(state, subject(T0, 10));
    const got = ticks(
      state,
      [tick('tk_1', T0 + 5 * MIN, 12), tick('tk_1', T0 + 10 * MIN, 8), tick('tk_1', T0 + 15 * MIN, 13)],
      emitter,
    );
    expect(got).toEqual([]);
    expect(advanceOutcomes(state, T0 + 15 * MIN, emitter)).toEqual([]);
    const [r] = advanceOutcomes(state, T0 + 15 * MIN + 1, emitter);
    expect(r).toEqual({
      subject: subject(T0, 10),
      horizon: '15m',
      resolvedAt: T0 + 15 * MIN,
      forwardReturn: 13 / 10 - 1,
      maxDrawdown: 8 / 10 - 1,
      peakReturn: 13 / 10 - 1,
      timeToPeakMs: 15 * MIN,
      died: false,
      lastPrice: 13,
    });
    const [record] = emitter.outputs.filter((o) => o.topic === OUTCOMES_TOPIC);
    expect(record).toMatchObject({ key: 'tk_1', timestamp: T0 + 15 * MIN });
    const outcome = record.value as Outcome;
    expect(outcome).toMatchObject({ outcomeId: emitter.id('out', `call_${T0}`, '15m'), subjectKind: 'call', horizon: '15m', subjectTs: T0 });
    expect(OutcomeSchema.parse(avroRoundTrip('outcome', outcome))).toEqual(outcome);
  });

  it('reports no move when no tick falls inside the horizon, and the first time of an equal peak', () => {
    const state = createOutcomesState();
    ticks(state, [tick('tk_1', T0, 10)]);
    trackSubject(state, subject(T0 + MIN, 10));
    const quiet = advanceOutcomes(state, T0 + 17 * MIN, recordingEmitter());
    expect(at(quiet, '15m')).toMatchObject({ forwardReturn: 0, maxDrawdown: 0, peakReturn: 0, timeToPeakMs: 0, lastPrice: 10, died: false });
    ticks(state, [tick('tk_1', T0 + 20 * MIN, 11), tick('tk_1', T0 + 30 * MIN, 11), tick('tk_1', T0 + 40 * MIN, 9)]);
    const hour = advanceOutcomes(state, T0 + 2 * HOUR, recordingEmitter());
    expect(at(hour, '1h')).toMatchObject({ peakReturn: 11 / 10 - 1, timeToPeakMs: 19 * MIN, maxDrawdown: 9 / 10 - 1, lastPrice: 9 });
  });

  it('leaves ticks at the subject time itself out of its window', () => {
    const state = createOutcomesState();
    trackSubject(state, subject(T0 - MIN, 11, { subjectId: 'earlier' }));
    ticks(state, [tick('tk_1', T0, 12), tick('tk_1', T0, 10)]);
    trackSubject(state, subject(T0, 10));
    const got = advanceOutcomes(state, T0 + 16 * MIN, recordingEmitter());
    expect(got.find((r) => r.subject.subjectId === 'earlier')).toMatchObject({ peakReturn: 12 / 11 - 1, timeToPeakMs: MIN });
    expect(got.find((r) => r.subject.ts === T0)).toMatchObject({ peakReturn: 0, maxDrawdown: 0, timeToPeakMs: 0, forwardReturn: 0 });
  });

  it('emits resolutions in order of resolvedAt across horizons', () => {
    const state = createOutcomesState();
    const emitter = recordingEmitter();
    ticks(state, [tick('tk_1', T0, 1)]);
    trackSubject(state, subject(T0, 1, { subjectId: 'a' }));
    trackSubject(state, subject(T0 + 50 * MIN, 1, { subjectId: 'b' }));
    const got = advanceOutcomes(state, T0 + 8 * DAY, emitter);
    expect(got.length).toBe(12);
    const times = got.map((r) => r.resolvedAt);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(got.slice(0, 3).map((r) => [r.subject.subjectId, r.horizon])).toEqual([
      ['a', '15m'],
      ['a', '1h'],
      ['b', '15m'],
    ]);
    expect(emitter.outputs.map((o) => o.timestamp)).toEqual(times);
  });

  it('marks a token that is rugged inside the horizon as died, with its last price', () => {
    const p = createPipeline();
    feed(p, { kind: 'meta', value: tokenMeta('tk_1', 'AAA', T0) });
    for (let m = 1; m <= 20; m++) feed(p, { kind: 'tick', value: tick('tk_1', T0 + m * MIN, 1 + m / 100) });
    feed(p, { kind: 'tick', value: tick('tk_1', T0 + 25 * MIN, 0.02) });
    feed(p, { kind: 'meta', value: tokenMeta('tk_1', 'AAA', T0 + 26 * MIN, { status: 'rugged' }) });
    advance(p, T0 + 8 * DAY);
    const first = p.resolutions.filter((r) => r.subject.ts === T0 + 5 * MIN);
    expect(first.length).toBe(6);
    expect(at(first, '15m')).toMatchObject({ died: false, lastPrice: 1.2 });
    // The price collapse alone already shows in the 1h return; the status marks it dead.
    expect(at(first, '1h')).toMatchObject({ died: true, lastPrice: 0.02 });
    expect(at(first, '1h').forwardReturn).toBeCloseTo(0.02 / 1.05 - 1, 12);
    expect(at(first, '7d')).toMatchObject({ died: true, lastPrice: 0.02 });
    // Snapshots taken after the rug are dead from the start.
    const after = p.resolutions.filter((r) => r.subject.ts > T0 + 26 * MIN);
    expect(after.length).toBeGreaterThan(HORIZONS.length);
    expect(after.every((r) => r.died)).toBe(true);
  });

  it('marks a collapse of liquidity below 10% of the entry liquidity as died, and a revival as alive again', () => {
    const state = createOutcomesState();
    ticks(state, [tick('tk_1', T0, 1, { liquidityUsd: 100_000 })]);
    trackSubject(state, subject(T0, 1));
    const got = ticks(state, [
      tick('tk_1', T0 + 30 * MIN, 1, { liquidityUsd: DIED_LIQUIDITY_FRACTION * 100_000 }),
      tick('tk_1', T0 + 2 * HOUR, 0.05, { liquidityUsd: 9_999 }),
    ]);
    got.push(...advanceOutcomes(state, T0 + 8 * DAY, recordingEmitter()));
    expect(at(got, '1h').died).toBe(false); // exactly 10% is not below it
    expect(at(got, '6h')).toMatchObject({ died: true, lastPrice: 0.05 });

    outcomesOnTokenMeta(state, tokenMeta('tk_1', 'AAA', T0 + 8 * DAY, { status: 'dead' }));
    outcomesOnTokenMeta(state, tokenMeta('tk_1', 'AAA', T0 + 9 * DAY, { status: 'active' }));
    trackSubject(state, subject(T0 + 8 * DAY - HOUR, 0.05));
    trackSubject(state, subject(T0 + 9 * DAY, 0.05));
    const later = advanceOutcomes(state, T0 + 20 * DAY, recordingEmitter());
    const before = later.filter((r) => r.subject.ts === T0 + 8 * DAY - HOUR);
    expect(at(before, '15m').died).toBe(false);
    expect(at(before, '6h').died).toBe(true);
    expect(later.filter((r) => r.subject.ts === T0 + 9 * DAY).every((r) => !r.died)).toBe(true);
  });

  it('gives null returns for a subject without a positive entry price, and refuses subjects out of time order', () => {
    const state = createOutcomesState();
    ticks(state, [tick('tk_1', T0, 0)]);
    expect(trackSubject(state, subject(T0, 0))).toBe(true);
    expect(trackSubject(state, subject(T0 - 1, 1))).toBe(false);
    expect(refusedSubjects(state)).toBe(1);
    const got = advanceOutcomes(state, T0 + 16 * MIN, recordingEmitter());
    expect(got).toEqual([
      expect.objectContaining({ forwardReturn: null, maxDrawdown: null, peakReturn: null, timeToPeakMs: null, lastPrice: 0, died: false }),
    ]);
  });
});

describe('outcomes, property: matches a brute-force computation on random price paths', () => {
  for (const seed of [11, 12, 13, 14]) {
    it(`seed ${seed}`, () => {
      const random = seededRandom(seed);
      const tokens = ['tk_1', 'tk_2'];
      const state = createOutcomesState();
      const emitter = recordingEmitter();
      const history: MarketTick[] = [];
      const subjects: OutcomeSubject[] = [];
      const resolutions: { r: OutcomeResolution; emittedAt: number }[] = [];
      const price = [1, 1];
      const liquidity = [1e5, 1e5];
      const step = (t: number) => {
        for (const r of advanceOutcomes(state, t, emitter)) resolutions.push({ r, emittedAt: t });
      };
      // Ticks at even milliseconds, subjects at odd ones: no ties between the two.
      for (let t = T0; t < T0 + 9 * DAY; t += 2 * (1 + Math.floor(random() * 10 * MIN))) {
        const k = Math.floor(random() * 2);
        if (random() < 0.15) {
          const last = history.filter((x) => x.tokenId === tokens[k]).at(-1);
          if (!last) continue;
          step(t + 1);
          const s = { kind: 'snapshot' as const, subjectId: `s${subjects.length}`, tokenId: tokens[k], ts: t + 1, entryPrice: last.priceUsd };
          trackSubject(state, s);
          subjects.push(s);
          continue;
        }
        // Prices on a coarse grid so that equal peaks happen; now and then the pool is pulled.
        price[k] = Math.max(0.01, Math.round(price[k] * Math.exp((random() - 0.5) * 0.2) * 100) / 100);
        liquidity[k] = random() < 0.01 ? liquidity[k] * 0.05 : liquidity[k] * Math.exp((random() - 0.5) * 0.1);
        const x = tick(tokens[k], t, price[k], { liquidityUsd: liquidity[k] });
        step(t);
        outcomesOnTick(state, x);
        history.push(x);
      }
      step(T0 + 30 * DAY);

      expect(resolutions.length).toBe(subjects.length * HORIZONS.length);
      expect(subjects.length).toBeGreaterThan(50);
      let died = 0;
      for (const { r, emittedAt } of resolutions) {
        const s = r.subject;
        const end = s.ts + HORIZON_MS[r.horizon];
        expect(r.resolvedAt).toBe(end);
        expect(emittedAt).toBeGreaterThan(end);
        const mine = history.filter((x) => x.tokenId === s.tokenId);
        const inside = mine.filter((x) => x.ts > s.ts && x.ts <= end);
        const lastPrice = mine.filter((x) => x.ts <= end).at(-1)!.priceUsd;
        const entryLiquidity = mine.filter((x) => x.ts < s.ts).at(-1)!.liquidityUsd;
        let peak = s.entryPrice;
        let peakAt = s.ts;
        let low = s.entryPrice;
        for (const x of inside) {
          if (x.priceUsd > peak) [peak, peakAt] = [x.priceUsd, x.ts];
          low = Math.min(low, x.priceUsd);
        }
        const expectedDied = inside.some((x) => x.liquidityUsd < DIED_LIQUIDITY_FRACTION * entryLiquidity);
        if (expectedDied) died++;
        expect(r, `${s.subjectId} at ${r.horizon}`).toEqual({
          subject: s,
          horizon: r.horizon,
          resolvedAt: end,
          forwardReturn: lastPrice / s.entryPrice - 1,
          maxDrawdown: Math.min(0, low / s.entryPrice - 1),
          peakReturn: Math.max(0, peak / s.entryPrice - 1),
          timeToPeakMs: peakAt - s.ts,
          died: expectedDied,
          lastPrice,
        });
      }
      expect(died).toBeGreaterThan(0);
    });
  }
});
