import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { AnalogNeighbour, OutcomeResolution, ScoredSnapshot } from '../contracts.ts';
import {
  ANALOG_K_DEFAULT,
  ANALOG_K_MAX,
  analogsStateFromColumns,
  candidateColumns,
  createAnalogsState,
  onResolution,
  onSnapshot,
  queryAnalogs,
  summarise,
  type AnalogCandidateColumns,
  type AnalogQuery,
  type AnalogsState,
} from './analogs.ts';
import { ANALOG_DIMS as D, analogInputs, fitStandardisation, writeRawVector, type AnalogInputs } from './vector.ts';
import { seededRandom } from '../../../infra/feeds/sim/prng.ts';
import { randomInputs } from './test-support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2024, 0, 1);

const BASE_INPUTS: AnalogInputs = {
  momentum: 50,
  crowding: 50,
  earlyQuality: 50,
  narrativeVelocity: 50,
  priceChange1h: 0,
  volumeAcceleration: 1,
  liquidityUsd: 10_000,
};

function scored(snapshotId: string, tokenId: string, ts: number, inputs: AnalogInputs): ScoredSnapshot {
  return {
    snapshotId,
    tokenId,
    ts,
    features: { price_change_1h: inputs.priceChange1h, volume_acceleration: inputs.volumeAcceleration, liquidity_usd: inputs.liquidityUsd },
    scores: {
      momentum: inputs.momentum,
      conviction: null,
      crowding: inputs.crowding,
      early_quality: inputs.earlyQuality,
      narrative_velocity: inputs.narrativeVelocity,
      divergence: null,
      smart_cohort: null,
    },
    details: [],
    divergenceState: 'none',
  };
}

function resolution(s: ScoredSnapshot, forwardReturn: number | null, maxDrawdown: number | null, horizon: OutcomeResolution['horizon'] = '24h'): OutcomeResolution {
  return {
    subject: { kind: 'snapshot', subjectId: s.snapshotId, tokenId: s.tokenId, ts: s.ts, entryPrice: 1 },
    horizon,
    resolvedAt: s.ts + DAY,
    forwardReturn,
    maxDrawdown,
    peakReturn: null,
    timeToPeakMs: null,
    died: false,
    lastPrice: null,
  };
}

/**
 * Drives the module as the engine does: a snapshot of some tokens every 5 minutes, each
 * resolving 24h later (in time order), some never resolving (no price). Returns every
 * snapshot made, resolved or not.
 */
function history(state: AnalogsState, random: () => number, steps: number, tokens: number): ScoredSnapshot[] {
  const made: ScoredSnapshot[] = [];
  const waiting: ScoredSnapshot[] = [];
  for (let step = 0; step < steps; step++) {
    const t = T0 + step * 5 * 60_000;
    while (waiting.length > 0 && waiting[0].ts + DAY <= t) {
      const s = waiting.shift()!;
      onResolution(state, resolution(s, Math.round((random() - 0.5) * 20) / 10, -Math.round(random() * 10) / 10));
    }
    for (let tk = 0; tk < tokens; tk++) {
      if (random() < 0.5) continue;
      const s = scored(`snap_${step}_${tk}`, `tk_${tk}`, t, randomInputs(random));
      onSnapshot(state, s, analogInputs(s));
      made.push(s);
      if (random() < 0.95) waiting.push(s);
    }
  }
  return made;
}

/** The definition, spelled out: eligible candidates by (distance, snapshotId), first k. */
function bruteForce(state: AnalogsState, query: AnalogQuery, k: number): { snapshotId: string; distance: number }[] {
  const cols: AnalogCandidateColumns = candidateColumns(state);
  const { mean, std } = state.standardisation;
  const z = (raw: ArrayLike<number>, o: number, d: number): number => {
    const x = raw[o + d];
    return Number.isNaN(x) ? 0 : Math.fround((x - mean[d]) / std[d]);
  };
  const qRaw = new Float64Array(D);
  writeRawVector(query.inputs, qRaw, 0);
  const rows: { snapshotId: string; d2: number }[] = [];
  for (let i = 0; i < cols.count; i++) {
    if (cols.resolvedAt[i] > query.ts) continue;
    if (cols.tokenId[i] === query.tokenId && Math.abs(cols.ts[i] - query.ts) <= DAY) continue;
    let d2 = 0;
    for (let d = 0; d < D; d++) d2 += (z(cols.raw, i * D, d) - z(qRaw, 0, d)) ** 2;
    rows.push({ snapshotId: cols.snapshotId[i], d2 });
  }
  rows.sort((a, b) => a.d2 - b.d2 || (a.snapshotId < b.snapshotId ? -1 : a.snapshotId > b.snapshotId ? 1 : 0));
  return rows.slice(0, k).map((r) => ({ snapshotId: r.snapshotId, distance: Math.sqrt(r.d2) }));
}

describe('analog vector', () => {
  it('maps inputs to log scales and marks nulls and non-finite values missing', () => {
    const raw = new Float64Array(D);
    writeRawVector({ ...BASE_INPUTS, priceChange1h: 1, volumeAcceleration: Math.E - 1, liquidityUsd: 1_000 }, raw, 0);
    expect(Array.from(raw)).toEqual([50, 50, 50, 50, Math.log(2), 1, 3]);
    writeRawVector({ ...BASE_INPUTS, momentum: null, priceChange1h: -1, volumeAcceleration: Infinity, liquidityUsd: 0.5 }, raw, 0);
    expect(raw[0]).toBeNaN();
    expect(raw[4]).toBe(Math.log(1e-6));
    expect(raw[5]).toBeNaN();
    expect(raw[6]).toBe(0);
  });

  it('standardises with mean and population stdev of the present values', () => {
    const raw = new Float64Array(3 * D).fill(NaN);
    [1, 3, NaN].forEach((x, i) => (raw[i * D] = x));
    [5, 5, 5].forEach((x, i) => (raw[i * D + 1] = x));
    const s = fitStandardisation(raw, 3);
    expect([s.mean[0], s.std[0]]).toEqual([2, 1]);
    expect([s.mean[1], s.std[1]]).toEqual([5, 1]); // no spread: unit scale
    expect([s.mean[2], s.std[2]]).toEqual([0, 1]); // no values at all
  });
});

describe('analogs', () => {
  it('equals a brute-force reference on random histories, through rebuilds and tails', () => {
    const random = seededRandom(42);
    const state = createAnalogsState();
    const made = history(state, random, 600, 12);
    const end = T0 + 600 * 5 * 60_000;
    expect(state.candidates.count).toBeGreaterThan(1_000);
    expect(state.candidates.count).toBeGreaterThan(state.tree.size); // a tail is being scanned too
    for (let i = 0; i < 300; i++) {
      const copy = made[Math.floor(random() * made.length)];
      const query: AnalogQuery = {
        tokenId: random() < 0.8 ? copy.tokenId : 'tk_unknown',
        ts: Math.round(T0 + DAY + random() * (end - T0 - DAY)),
        inputs: random() < 0.3 ? randomInputs(random) : inputsOf(copy),
      };
      const k = 1 + Math.floor(random() * ANALOG_K_MAX);
      const got = queryAnalogs(state, query, k).neighbours.map((n) => ({ snapshotId: n.snapshotId, distance: n.distance }));
      expect(got).toEqual(bruteForce(state, query, k));
    }
  });

  it('breaks ties by snapshotId however the equal candidates spread over the tree', () => {
    const random = seededRandom(5);
    const n = 3_000;
    const twin: AnalogInputs = { ...BASE_INPUTS, momentum: 100, crowding: 0 };
    const raw = new Float64Array(n * D);
    const ids = Array.from({ length: n }, (_, i) => `s_${String(i).padStart(4, '0')}`);
    // A third are copies of one vector, their ids shuffled against their positions.
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [ids[i], ids[j]] = [ids[j], ids[i]];
    }
    for (let i = 0; i < n; i++) writeRawVector(i % 3 === 0 ? twin : randomInputs(random), raw, i * D);
    const state = analogsStateFromColumns({
      count: n,
      snapshotId: ids,
      tokenId: ids.map((_, i) => `tk_${i % 50}`),
      ts: new Float64Array(n).fill(T0),
      resolvedAt: new Float64Array(n).fill(T0 + DAY),
      return24h: new Float64Array(n),
      maxDrawdown24h: new Float64Array(n),
      raw,
    });
    for (const inputs of [twin, { ...twin, momentum: 90 }, { ...twin, liquidityUsd: 3_000 }]) {
      for (const k of [1, 10, 100]) {
        const query: AnalogQuery = { tokenId: 'tk_q', ts: T0 + 2 * DAY, inputs };
        expect(queryAnalogs(state, query, k).neighbours).toEqual(bruteForceNeighbours(state, query, k));
      }
    }
  });

  it('answers the same from a one-build state over the same candidates', () => {
    const random = seededRandom(7);
    const live = createAnalogsState();
    history(live, random, 400, 8);
    const rebuilt = analogsStateFromColumns(candidateColumns(live));
    for (let i = 0; i < 50; i++) {
      const query: AnalogQuery = { tokenId: `tk_${i % 8}`, ts: T0 + 400 * 5 * 60_000, inputs: randomInputs(random) };
      expect(queryAnalogs(rebuilt, query, 40).neighbours).toEqual(bruteForceNeighbours(rebuilt, query, 40));
    }
  });

  it('never uses an outcome resolved after the query time', () => {
    const state = createAnalogsState();
    const early = scored('s_early', 'tk_a', T0, { ...BASE_INPUTS, momentum: 10 });
    const exact = scored('s_exact', 'tk_b', T0 + HOUR, BASE_INPUTS);
    onSnapshot(state, early, analogInputs(early));
    onSnapshot(state, exact, analogInputs(exact));
    onResolution(state, resolution(early, 0.1, -0.1));
    onResolution(state, resolution(exact, 0.2, -0.2));
    const at = (ts: number): string[] => queryAnalogs(state, { tokenId: 'tk_q', ts, inputs: BASE_INPUTS }, 10).neighbours.map((n) => n.snapshotId);
    expect(at(T0 + DAY - 1)).toEqual([]);
    expect(at(T0 + DAY)).toEqual(['s_early']);
    expect(at(T0 + HOUR + DAY - 1)).toEqual(['s_early']);
    expect(at(T0 + HOUR + DAY)).toEqual(['s_exact', 's_early']);
  });

  it('excludes the same token within ±24h of the query, and only that', () => {
    const t = T0 + 10 * DAY;
    const rows = [
      { id: 'same_at_minus_24h', token: 'tk_a', ts: t - DAY },
      { id: 'same_just_before', token: 'tk_a', ts: t - DAY - 1 },
      { id: 'same_1h_before', token: 'tk_a', ts: t - HOUR },
      { id: 'same_1h_after', token: 'tk_a', ts: t + HOUR },
      { id: 'other_1h_before', token: 'tk_b', ts: t - HOUR },
    ];
    // Resolution times are set to the query time to isolate the token rule from the time rule.
    const raw = new Float64Array(rows.length * D);
    rows.forEach((_, i) => writeRawVector(BASE_INPUTS, raw, i * D));
    const state = analogsStateFromColumns({
      count: rows.length,
      snapshotId: rows.map((r) => r.id),
      tokenId: rows.map((r) => r.token),
      ts: Float64Array.from(rows, (r) => r.ts),
      resolvedAt: Float64Array.from(rows, () => t),
      return24h: new Float64Array(rows.length),
      maxDrawdown24h: new Float64Array(rows.length),
      raw,
    });
    const ids = queryAnalogs(state, { tokenId: 'tk_a', ts: t, inputs: BASE_INPUTS }, 10).neighbours.map((n) => n.snapshotId);
    expect(ids.sort()).toEqual(['other_1h_before', 'same_just_before']);

    // Through the engine's path: a token's own snapshot from exactly 24h ago resolves at the query time, and is still excluded.
    const live = createAnalogsState();
    const own = scored('own', 'tk_a', T0, BASE_INPUTS);
    const other = scored('other', 'tk_b', T0, BASE_INPUTS);
    for (const s of [own, other]) onSnapshot(live, s, analogInputs(s));
    for (const s of [own, other]) onResolution(live, resolution(s, 0, 0));
    expect(queryAnalogs(live, { tokenId: 'tk_a', ts: T0 + DAY, inputs: BASE_INPUTS }, 10).neighbours.map((n) => n.snapshotId)).toEqual(['other']);
  });

  it('takes k from 1 to 100, nearest first, and refuses anything else', () => {
    const state = createAnalogsState();
    history(state, seededRandom(3), 350, 6);
    const query: AnalogQuery = { tokenId: 'tk_x', ts: T0 + 10 * DAY, inputs: BASE_INPUTS };
    expect(ANALOG_K_DEFAULT).toBe(40);
    expect(queryAnalogs(state, query, 1).neighbours).toHaveLength(1);
    const hundred = queryAnalogs(state, query, 100).neighbours;
    expect(hundred).toHaveLength(100);
    for (let i = 1; i < hundred.length; i++) expect(hundred[i].distance).toBeGreaterThanOrEqual(hundred[i - 1].distance);
    for (const k of [0, 101, 2.5, Number.NaN, -1]) expect(() => queryAnalogs(state, query, k)).toThrow(RangeError);
  });

  it('summarises a hand-made set per spec 2.5', () => {
    const state = createAnalogsState();
    const outcomes: [number | null, number | null][] = [
      [0.1, -0.1],
      [-0.2, -0.5],
      [0.3, null],
      [null, -0.05],
      [0.05, 0],
    ];
    const snaps = outcomes.map((_, i) => scored(`s_${i}`, `tk_${i}`, T0 + i, { ...BASE_INPUTS, momentum: 50 + i }));
    for (const s of snaps) onSnapshot(state, s, analogInputs(s));
    snaps.forEach((s, i) => onResolution(state, resolution(s, outcomes[i][0], outcomes[i][1])));
    const { neighbours, summary } = queryAnalogs(state, { tokenId: 'tk_q', ts: T0 + 2 * DAY, inputs: { ...BASE_INPUTS, momentum: 50 } }, 40);
    expect(neighbours.map((n) => n.snapshotId)).toEqual(['s_0', 's_1', 's_2', 's_3', 's_4']);
    expect(neighbours[3]).toMatchObject({ tokenId: 'tk_3', ts: T0 + 3, return24h: null, maxDrawdown24h: -0.05 });
    expect(summary.n).toBe(5);
    expect(summary.median24h).toBeCloseTo(0.075, 12); // of -0.2, 0.05, 0.1, 0.3
    expect(summary.worstDrawdown24h).toBe(-0.5);
    expect(summary.positiveShare).toBe(0.75);
    expect(summary.confidence).toBe('LOW'); // n < 10

    const empty = queryAnalogs(createAnalogsState(), { tokenId: 'tk_q', ts: T0, inputs: BASE_INPUTS }, 40).summary;
    expect(empty).toEqual({ n: 0, median24h: null, worstDrawdown24h: null, positiveShare: null, confidence: 'LOW' });
  });

  it('grades confidence by n, mean distance and imputed share', () => {
    const at = (n: number, distance: number): AnalogNeighbour[] =>
      Array.from({ length: n }, (_, i) => ({ snapshotId: `s_${i}`, tokenId: 't', ts: 0, distance, return24h: 0, maxDrawdown24h: 0 }));
    const gap = (g: number): number => g * Math.sqrt(D);
    expect(summarise(at(30, gap(0.5)), 1 / 7).confidence).toBe('HIGH');
    expect(summarise(at(29, gap(0.5)), 0).confidence).toBe('MEDIUM');
    expect(summarise(at(30, gap(0.6)), 0).confidence).toBe('MEDIUM');
    expect(summarise(at(30, gap(0.5)), 2 / 7).confidence).toBe('MEDIUM');
    expect(summarise(at(30, gap(0.5)), 3 / 7).confidence).toBe('LOW');
    expect(summarise(at(30, gap(1.1)), 0).confidence).toBe('LOW');
    expect(summarise(at(9, gap(0.1)), 0).confidence).toBe('LOW');
  });

  it('drops pending snapshots that will never resolve, and ignores other horizons and calls', () => {
    const state = createAnalogsState();
    const a = scored('a', 'tk_a', T0, BASE_INPUTS);
    const b = scored('b', 'tk_b', T0 + HOUR, BASE_INPUTS);
    onSnapshot(state, a, analogInputs(a));
    onSnapshot(state, b, analogInputs(b));
    onResolution(state, resolution(b, 0, 0, '1h'));
    onResolution(state, { ...resolution(b, 0, 0), subject: { ...resolution(b, 0, 0).subject, kind: 'call' } });
    expect(state.candidates.count).toBe(0);
    onResolution(state, resolution(b, 0, 0));
    expect(state.candidates.count).toBe(1);
    expect(state.pending.seqById.size).toBe(0); // a, older than b, has no outcome coming
  });

  it('answers identically after a checkpoint round trip, and goes on identically', () => {
    const random = seededRandom(11);
    const state = createAnalogsState();
    history(state, random, 350, 6);
    const restored = deserialize(serialize(state)) as AnalogsState;
    const queries = Array.from({ length: 30 }, (_, i): AnalogQuery => ({ tokenId: `tk_${i % 6}`, ts: T0 + 2 * DAY + i * HOUR, inputs: randomInputs(random) }));
    for (const q of queries) expect(queryAnalogs(restored, q, 40)).toEqual(queryAnalogs(state, q, 40));

    // The pending snapshots survive too: the same further history gives the same answers.
    history(state, seededRandom(12), 350, 6);
    history(restored, seededRandom(12), 350, 6);
    for (const q of queries) expect(queryAnalogs(restored, q, 40)).toEqual(queryAnalogs(state, q, 40));
  });
});

function inputsOf(s: ScoredSnapshot): AnalogInputs {
  return {
    momentum: s.scores.momentum,
    crowding: s.scores.crowding,
    earlyQuality: s.scores.early_quality,
    narrativeVelocity: s.scores.narrative_velocity,
    priceChange1h: s.features.price_change_1h,
    volumeAcceleration: s.features.volume_acceleration,
    liquidityUsd: s.features.liquidity_usd,
  };
}

function bruteForceNeighbours(state: AnalogsState, query: AnalogQuery, k: number): AnalogNeighbour[] {
  const cols = candidateColumns(state);
  const index = new Map(cols.snapshotId.map((id, i) => [id, i]));
  const nullIfNaN = (x: number): number | null => (Number.isNaN(x) ? null : x);
  return bruteForce(state, query, k).map(({ snapshotId, distance }) => {
    const i = index.get(snapshotId)!;
    return { snapshotId, tokenId: cols.tokenId[i], ts: cols.ts[i], distance, return24h: nullIfNaN(cols.return24h[i]), maxDrawdown24h: nullIfNaN(cols.maxDrawdown24h[i]) };
  });
}
