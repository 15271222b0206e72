import { TOPICS } from '../../../schemas/catalogue.ts';
import type { MarketTick, TokenMeta } from '../../../schemas/records.ts';
import type { Outcome } from '../../../schemas/records/quant-market.ts';
import { HORIZON_MS, HORIZONS, type Emitter, type OutcomeResolution, type OutcomeSubject } from '../contracts.ts';

/**
 * Forward outcomes of tracked subjects (snapshots and authors' calls) at every horizon.
 *
 * A subject at ts resolves at horizon h once event time passes ts + h, over the ticks in
 * (ts, ts + h]. Per token and horizon, monotonic deques hold the running max and min of price
 * and the min of liquidity over the ticks since the oldest pending subject; subjects resolve
 * in time order, so each resolution only drops ticks from the deques' fronts. Every tick and
 * every subject costs O(1) amortised per horizon; no price history is ever scanned.
 *
 * Died: the token was dead at some moment in (ts, ts + h], meaning its TokenMeta status was
 * one of DEAD_STATUSES, or a tick showed liquidity below DIED_LIQUIDITY_FRACTION of the
 * token's liquidity at entry (the last tick at or before ts). Rugs pull well over 90% of the
 * pool at once, while ordinary cooling rarely loses that much within a week.
 */

export const OUTCOMES_TOPIC = TOPICS.outcomes.name;
export const DEAD_STATUSES: readonly string[] = ['dead', 'rugged'];
export const DIED_LIQUIDITY_FRACTION = 0.1;

/**
 * A monotonic deque of (time, value) pairs, interleaved in a Float64Array: live pairs are
 * [head, tail). Typed arrays cost the garbage collector nothing to trace and checkpoint
 * compactly. When the tail reaches the end, the live pairs move to the front if that frees
 * at least half the buffer, else the buffer doubles: O(1) amortised.
 */
interface Deque {
  buf: Float64Array;
  head: number;
  tail: number;
}

interface HorizonTrack {
  /** Subjects of this token still waiting for this horizon. */
  pending: number;
  /** Prices, non-increasing from the front: the front is the earliest highest price. */
  max: Deque;
  /** Prices, non-decreasing from the front. */
  min: Deque;
  /** Liquidity, non-decreasing from the front. */
  liq: Deque;
}

interface TokenTrack {
  lastTs: number;
  lastPrice: number | null;
  lastLiquidity: number | null;
  /** Changes of dead-ness from TokenMeta status, sorted by time; a token starts alive. */
  deadChanges: { ts: number; dead: boolean }[];
  horizons: HorizonTrack[];
}

/**
 * Tracked subjects in the order they arrived, which is time order, as columns (a million
 * pending subjects must stay cheap to hold and to checkpoint). Each horizon resolves them in
 * this same order, so a horizon's queue is just a cursor into the store.
 */
interface SubjectStore {
  /** Sequence number of the subject at index 0. */
  base: number;
  kind: OutcomeSubject['kind'][];
  subjectId: string[];
  tokenId: string[];
  ts: number[];
  entryPrice: number[];
  /** Liquidity of the token's last tick at entry; NaN when it had no tick yet. */
  entryLiquidity: number[];
}

export interface OutcomesState {
  tokens: Map<string, TokenTrack>;
  subjects: SubjectStore;
  /** Per horizon (HORIZONS order): sequence number of the next subject to resolve. */
  next: number[];
  /** Time of the latest subject tracked: subjects must come in time order. */
  lastSubjectTs: number;
  /** Subjects refused because they were older than one already tracked. */
  refused: number;
}

// Module-level copies: the hot loops then read plain locals, not imported bindings.
const HORIZON_LIST = [...HORIZONS];
const DURATIONS = HORIZON_LIST.map((h) => HORIZON_MS[h]);
/** Index of the longest horizon: its cursor is always the furthest behind. */
const LONGEST = DURATIONS.indexOf(Math.max(...DURATIONS));

export function createOutcomesState(): OutcomesState {
  return {
    tokens: new Map(),
    subjects: { base: 0, kind: [], subjectId: [], tokenId: [], ts: [], entryPrice: [], entryLiquidity: [] },
    next: HORIZON_LIST.map(() => 0),
    lastSubjectTs: -Infinity,
    refused: 0,
  };
}

/**
 * Starts tracking a subject at every horizon; its entry liquidity is the token's latest.
 * Subjects must arrive in time order (the engine tracks snapshots as they are emitted and
 * calls at their post's time): an older subject would need ticks already dropped, so it is
 * refused (returns false) and counted.
 */
export function trackSubject(state: OutcomesState, subject: OutcomeSubject): boolean {
  if (subject.ts < state.lastSubjectTs) {
    state.refused++;
    return false;
  }
  state.lastSubjectTs = subject.ts;
  const token = tokenTrack(state, subject.tokenId);
  const s = state.subjects;
  s.kind.push(subject.kind);
  s.subjectId.push(subject.subjectId);
  s.tokenId.push(subject.tokenId);
  s.ts.push(subject.ts);
  s.entryPrice.push(subject.entryPrice);
  s.entryLiquidity.push(token.lastLiquidity ?? Number.NaN);
  for (const track of token.horizons) track.pending++;
  return true;
}

/** Ticks older than the token's latest one are ignored here: the deques are in time order. */
export function outcomesOnTick(state: OutcomesState, tick: MarketTick): void {
  const token = tokenTrack(state, tick.tokenId);
  if (tick.ts < token.lastTs) return;
  token.lastTs = tick.ts;
  token.lastPrice = tick.priceUsd;
  token.lastLiquidity = tick.liquidityUsd;
  for (const track of token.horizons) {
    if (track.pending === 0) continue; // no subject needs ticks from before its own time
    pushMax(track.max, tick.ts, tick.priceUsd);
    pushMin(track.min, tick.ts, tick.priceUsd);
    pushMin(track.liq, tick.ts, tick.liquidityUsd);
  }
}

export function outcomesOnTokenMeta(state: OutcomesState, meta: TokenMeta): void {
  const changes = tokenTrack(state, meta.tokenId).deadChanges;
  const dead = DEAD_STATUSES.includes(meta.status);
  let i = changes.length;
  while (i > 0 && changes[i - 1].ts > meta.ts) i--;
  const before = i > 0 ? changes[i - 1].dead : false;
  if (before !== dead) changes.splice(i, 0, { ts: meta.ts, dead });
}

/**
 * Resolves, emits (quant.outcomes, keyed by token id, timestamp resolvedAt) and returns
 * every subject-horizon pair with ts + h < t, in order of resolvedAt. Call it with each
 * event's time before applying the event, after tracking the subjects due by then.
 */
export function advanceOutcomes(state: OutcomesState, t: number, emitter: Emitter): OutcomeResolution[] {
  const resolutions: OutcomeResolution[] = [];
  const s = state.subjects;
  for (;;) {
    let h = -1;
    let due = t;
    for (let k = 0; k < DURATIONS.length; k++) {
      const i = state.next[k] - s.base;
      if (i < s.ts.length && s.ts[i] + DURATIONS[k] < due) {
        h = k;
        due = s.ts[i] + DURATIONS[k];
      }
    }
    if (h < 0) return resolutions;
    const resolution = resolve(state, state.next[h]++ - s.base, h);
    emitter.emit({ topic: OUTCOMES_TOPIC, key: resolution.subject.tokenId, value: toRecord(resolution, emitter), timestamp: due });
    resolutions.push(resolution);
    if (h === LONGEST) compact(state);
  }
}

function resolve(state: OutcomesState, i: number, h: number): OutcomeResolution {
  const s = state.subjects;
  const ts = s.ts[i];
  const entry = s.entryPrice[i];
  const token = state.tokens.get(s.tokenId[i])!;
  const track = token.horizons[h];
  const end = ts + DURATIONS[h];
  // The deques hold the ticks up to end; those at or before the subject's time are not in its window.
  dropThrough(track.max, ts);
  dropThrough(track.min, ts);
  dropThrough(track.liq, ts);
  const { max, min, liq } = track;
  const hasTicks = max.head < max.tail;
  const maxPrice = hasTicks ? max.buf[(max.head << 1) + 1] : entry;
  const minPrice = hasTicks ? min.buf[(min.head << 1) + 1] : entry;
  const priced = entry > 0 && Number.isFinite(entry);
  // NaN entry liquidity (no tick before entry) never compares below anything.
  const diedByLiquidity = hasTicks && liq.buf[(liq.head << 1) + 1] < DIED_LIQUIDITY_FRACTION * s.entryLiquidity[i];
  const resolution: OutcomeResolution = {
    subject: { kind: s.kind[i], subjectId: s.subjectId[i], tokenId: s.tokenId[i], ts, entryPrice: entry },
    horizon: HORIZON_LIST[h],
    resolvedAt: end,
    forwardReturn: priced && token.lastPrice !== null ? token.lastPrice / entry - 1 : null,
    maxDrawdown: priced ? Math.min(0, minPrice / entry - 1) : null,
    peakReturn: priced ? Math.max(0, maxPrice / entry - 1) : null,
    timeToPeakMs: priced ? (maxPrice > entry ? max.buf[max.head << 1] - ts : 0) : null,
    died: diedByLiquidity || deadDuring(token.deadChanges, ts, end),
    lastPrice: token.lastPrice,
  };
  if (--track.pending === 0) {
    clear(max);
    clear(min);
    clear(liq);
  }
  return resolution;
}

/** Drops the subjects every horizon has resolved, once they are half the store. */
function compact(state: OutcomesState): void {
  const s = state.subjects;
  const drop = state.next[LONGEST] - s.base;
  if (drop * 2 < s.ts.length) return;
  s.kind = s.kind.slice(drop);
  s.subjectId = s.subjectId.slice(drop);
  s.tokenId = s.tokenId.slice(drop);
  s.ts = s.ts.slice(drop);
  s.entryPrice = s.entryPrice.slice(drop);
  s.entryLiquidity = s.entryLiquidity.slice(drop);
  s.base += drop;
}

function toRecord(r: OutcomeResolution, emitter: Emitter): Outcome {
  return {
    outcomeId: emitter.id('out', r.subject.subjectId, r.horizon),
    subjectKind: r.subject.kind,
    subjectId: r.subject.subjectId,
    tokenId: r.subject.tokenId,
    subjectTs: r.subject.ts,
    horizon: r.horizon,
    entryPrice: r.subject.entryPrice,
    forwardReturn: r.forwardReturn,
    maxDrawdown: r.maxDrawdown,
    peakReturn: r.peakReturn,
    timeToPeakMs: r.timeToPeakMs,
    died: r.died,
    lastPrice: r.lastPrice,
    resolvedAt: r.resolvedAt,
  };
}

/** Dead at some moment in (from, to]: already dead at `from`, or turned dead inside. */
function deadDuring(changes: { ts: number; dead: boolean }[], from: number, to: number): boolean {
  let dead = false;
  for (const c of changes) {
    if (c.ts > to) break;
    if (c.ts <= from) dead = c.dead;
    else if (c.dead) return true;
  }
  return dead;
}

function tokenTrack(state: OutcomesState, tokenId: string): TokenTrack {
  let token = state.tokens.get(tokenId);
  if (!token) {
    token = {
      lastTs: -Infinity,
      lastPrice: null,
      lastLiquidity: null,
      deadChanges: [],
      horizons: HORIZONS.map(() => ({ pending: 0, max: deque(), min: deque(), liq: deque() })),
    };
    state.tokens.set(tokenId, token);
  }
  return token;
}

function deque(): Deque {
  return { buf: new Float64Array(16), head: 0, tail: 0 };
}

function append(d: Deque, t: number, v: number): void {
  if (d.tail << 1 === d.buf.length) {
    if (d.head << 2 >= d.buf.length) {
      d.buf.copyWithin(0, d.head << 1, d.tail << 1);
    } else {
      const grown = new Float64Array(d.buf.length << 1);
      grown.set(d.buf.subarray(d.head << 1, d.tail << 1));
      d.buf = grown;
    }
    d.tail -= d.head;
    d.head = 0;
  }
  d.buf[d.tail << 1] = t;
  d.buf[(d.tail << 1) + 1] = v;
  d.tail++;
}

/** Appends to a max deque, first dropping the smaller values the new one outlives; equal ones stay (earliest peak). */
function pushMax(d: Deque, t: number, v: number): void {
  while (d.tail > d.head && d.buf[(d.tail << 1) - 1] < v) d.tail--;
  append(d, t, v);
}

function pushMin(d: Deque, t: number, v: number): void {
  while (d.tail > d.head && d.buf[(d.tail << 1) - 1] > v) d.tail--;
  append(d, t, v);
}

function dropThrough(d: Deque, ts: number): void {
  while (d.head < d.tail && d.buf[d.head << 1] <= ts) d.head++;
}

function clear(d: Deque): void {
  d.head = 0;
  d.tail = 0;
}
