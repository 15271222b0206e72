import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HORIZON_MS } from '../../processors/quant-engine/contracts.ts';
import { storeHistory } from '../history/store.ts';
import { embeddedStore, HOUR, MIN, series, T0 } from '../history/testing/given.ts';
import { smallWorld, WORLD_END } from '../history/testing/world.ts';
import { computeEventStudy, eventStudyResult, refreshEventStudies, refreshTime, type EventStudiesState } from './compute.ts';
import { EVENT_STUDIES, eventStudy } from './studies.ts';

describe('event studies', () => {
  let store: Awaited<ReturnType<typeof embeddedStore>>;
  beforeAll(async () => {
    const world = smallWorld(11);
    store = await embeddedStore(world.snapshots, world.tokens);
  });
  afterAll(() => store.close());

  it('refreshed hour by hour, give the same figures as one computation at the same as-of time', async () => {
    const history = storeHistory(store);
    const asOf = refreshTime(WORLD_END - 1);
    let state: EventStudiesState | null = null;
    for (let t = T0 + HOUR; t <= asOf; t += HOUR) state = await refreshEventStudies(state, history, t);
    const once = await refreshEventStudies(null, history, asOf);
    for (const study of EVENT_STUDIES) expect(eventStudyResult(state!, study)).toEqual(eventStudyResult(once, study));
    expect(Object.values(once.studies).reduce((n, s) => n + s.events, 0)).toBeGreaterThan(10);
  });

  it('never reads past the as-of time', async () => {
    const history = storeHistory(store);
    const early = await refreshEventStudies(null, history, T0 + 10 * HOUR);
    for (const study of EVENT_STUDIES) {
      const s = early.studies[study.slug];
      expect(s.replayedTo).toBe(T0 + 10 * HOUR);
      for (const e of s.pending) expect(e.ts).toBeLessThanOrEqual(T0 + 10 * HOUR);
    }
    await expect(refreshEventStudies(early, history, T0 + 9 * HOUR)).rejects.toThrow(RangeError);
  });
});

describe('an event study', () => {
  it('gives per horizon the events resolved by then, the pending ones, the baseline and the abnormal return', async () => {
    // velocity-3x holds on tk_hot throughout: it fires at 00:00, ends at its 3 h maximum age,
    // waits its 1 h cooldown and fires again at 04:00. tk_hot rises 1% of its first price
    // per 5 minutes; tk_flat never moves and never fires.
    const velocity = { mention_velocity_1h: 4, mentions_1h: 6 };
    const store = await embeddedStore([
      ...series('tk_hot', T0, T0 + 8 * HOUR, 5 * MIN, (_ts, i) => ({ price: 1 + i / 100, fields: velocity })),
      ...series('tk_flat', T0, T0 + 8 * HOUR, 5 * MIN, () => ({ price: 1 })),
    ]);
    try {
      const asOf = T0 + 7 * HOUR;
      const r = await computeEventStudy(eventStudy('velocity-3x')!, storeHistory(store), asOf);
      expect(r).toMatchObject({ slug: 'velocity-3x', signal_type: 'VELOCITY_3X', as_of: '2026-01-01T07:00:00.000Z', events: 2 });
      const h1 = r.horizons.find((h) => h.horizon === '1h')!;
      expect(h1).toMatchObject({ n: 2, hits: 2, pending: 0 });
      expect(h1.median_return).toBeCloseTo(((1.6 / 1.48 - 1) + 0.12) / 2, 12);
      const h6 = r.horizons.find((h) => h.horizon === '6h')!;
      // At 6 h only the first event has resolved (06:00 ≤ 07:00); the second resolves at 10:00.
      expect(h6).toMatchObject({ n: 1, hits: 1, pending: 1 });
      expect(h6.median_return).toBeCloseTo(1.72 - 1, 12);
      // Baseline: each token's first snapshot of the 6 h slot from 00:00, over 1 h: +12% and 0%.
      expect(h1.baseline).toMatchObject({ n: 2, hits: 1 });
      expect(h1.abnormal_mean_return).toBeCloseTo(h1.mean_return! - h1.baseline.mean_return!, 12);
      expect(HORIZON_MS['1h']).toBe(HOUR);
      expect(r.disclaimer).toMatch(/not financial advice/);
    } finally {
      await store.close();
    }
  });
});
