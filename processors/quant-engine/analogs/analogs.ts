import { HORIZON_MS, type AnalogNeighbour, type AnalogSummary, type Confidence, type OutcomeResolution } from '../contracts.ts';
import { buildKdTree, scanBlock, searchKdTree, type CandidateFilter, type KdTree } from './kd-tree.ts';
import { TopK } from './top-k.ts';
import {
  ANALOG_DIMS as D,
  fitStandardisation,
  identityStandardisation,
  missingCount,
  standardiseInto,
  writeRawVector,
  type AnalogInputs,
  type Standardisation,
} from './vector.ts';

/**
 * Analogs (model analog-v1.0): the historical snapshots nearest to a query snapshot, with
 * what happened to them over the next 24 hours. Vector and distance: see vector.ts.
 *
 * Point in time: onSnapshot remembers each snapshot's vector; it becomes a candidate only
 * when onResolution delivers its 24h outcome. Every candidate keeps its resolution time and
 * a query at t uses only those resolved at or before t, and never the query's own token
 * within ±24h of t, so a query sees exactly what was known at t whatever else the state holds.
 *
 * Index: a k-d tree (kd-tree.ts) over the candidates up to the last rebuild, plus a scan of
 * the tail added since. The index is rebuilt, with the standardisation refitted over all
 * candidates, once the tail reaches 1/16 of the indexed size: rebuild work stays O(log n)
 * amortised per candidate and the tail scan stays a small fraction of a full scan. Rebuilds
 * happen at candidate counts, so replays rebuild at the same points and answer identically.
 *
 * Results are exact k nearest under the total order (distance, snapshotId).
 */

export const ANALOG_MODEL_VERSION = 'analog-v1.0';
export const ANALOG_K_DEFAULT = 40;
export const ANALOG_K_MAX = 100;
/** Same-token candidates this close to the query time are excluded (the same episode). */
export const SAME_TOKEN_WINDOW_MS = HORIZON_MS['24h'];
const REBUILD_TAIL_FRACTION = 1 / 16;

/**
 * Confidence of a summary. gap = mean neighbour distance / √7, the root-mean-square
 * difference per component in standard deviations; imputed = the larger of the query's
 * share of imputed components and the neighbours' mean share.
 *   HIGH:   n ≥ 30, gap ≤ 0.5 and imputed ≤ 1/7
 *   LOW:    n < 10, gap > 1 or imputed > 2/7
 *   MEDIUM: otherwise
 */
export const CONFIDENCE_RULES = {
  highMinN: 30,
  highMaxGap: 0.5,
  highMaxImputed: 1 / 7,
  lowBelowN: 10,
  lowAboveGap: 1,
  lowAboveImputed: 2 / 7,
} as const;

/**
 * Snapshots waiting for their 24h outcome, in arrival (time) order. `base` is the sequence
 * number of index 0; entries before `head` are done (resolved or dropped), awaiting a splice.
 */
interface PendingSnapshots {
  base: number;
  head: number;
  snapshotId: string[];
  tokenId: string[];
  ts: number[];
  /** D raw components per snapshot (vector.ts), NaN where missing. */
  raw: number[];
  /** Sequence number of each snapshot still pending. */
  seqById: Map<string, number>;
}

/** Resolved candidates as growable columns; [0, count) are live. Nulls are NaN. */
interface Candidates {
  count: number;
  snapshotId: string[];
  token: Int32Array;
  ts: Float64Array;
  resolvedAt: Float64Array;
  return24h: Float64Array;
  maxDrawdown24h: Float64Array;
  raw: Float64Array;
  missing: Uint8Array;
}

export interface AnalogsState {
  pending: PendingSnapshots;
  /** Token id → small integer, so eligibility checks compare numbers. */
  tokenCodes: Map<string, number>;
  tokenIds: string[];
  candidates: Candidates;
  /** Frozen at the last rebuild. */
  standardisation: Standardisation;
  /** Over candidates [0, tree.size). */
  tree: KdTree;
  /** Standardised vectors of candidates [tree.size, count). */
  tail: Float32Array;
}

/** What a query needs: whose snapshot, when, and its vector inputs. */
export interface AnalogQuery {
  tokenId: string;
  ts: number;
  inputs: AnalogInputs;
}

export interface AnalogResult {
  neighbours: AnalogNeighbour[];
  summary: AnalogSummary;
}

/** Candidates as plain columns (NaN for null), to load an index elsewhere, e.g. in a worker. */
export interface AnalogCandidateColumns {
  count: number;
  snapshotId: string[];
  tokenId: string[];
  ts: Float64Array;
  resolvedAt: Float64Array;
  return24h: Float64Array;
  maxDrawdown24h: Float64Array;
  /** D raw components per candidate (writeRawVector), NaN where missing. */
  raw: Float64Array;
}

/** Columns for `n` candidates, to be filled in: numbers zero, ids empty. */
export function allocateCandidateColumns(n: number): AnalogCandidateColumns {
  return {
    count: n,
    snapshotId: [],
    tokenId: [],
    ts: new Float64Array(n),
    resolvedAt: new Float64Array(n),
    return24h: new Float64Array(n),
    maxDrawdown24h: new Float64Array(n),
    raw: new Float64Array(n * D),
  };
}

const INITIAL_CAPACITY = 1024;

function emptyCandidates(capacity: number): Candidates {
  return {
    count: 0,
    snapshotId: [],
    token: new Int32Array(capacity),
    ts: new Float64Array(capacity),
    resolvedAt: new Float64Array(capacity),
    return24h: new Float64Array(capacity),
    maxDrawdown24h: new Float64Array(capacity),
    raw: new Float64Array(capacity * D),
    missing: new Uint8Array(capacity),
  };
}

export function createAnalogsState(): AnalogsState {
  const candidates = emptyCandidates(INITIAL_CAPACITY);
  return {
    pending: { base: 0, head: 0, snapshotId: [], tokenId: [], ts: [], raw: [], seqById: new Map() },
    tokenCodes: new Map(),
    tokenIds: [],
    candidates,
    standardisation: identityStandardisation(),
    tree: buildKdTree(new Float32Array(0), candidates.resolvedAt, candidates.token, candidates.ts, 0),
    tail: new Float32Array(INITIAL_CAPACITY * D),
  };
}

/** Which snapshot, of which token, at what time. */
export interface SnapshotRef {
  snapshotId: string;
  tokenId: string;
  ts: number;
}

/** Remembers a snapshot's vector until its 24h outcome resolves. */
export function onSnapshot(state: AnalogsState, snapshot: SnapshotRef, inputs: AnalogInputs): void {
  const p = state.pending;
  if (p.seqById.has(snapshot.snapshotId)) return;
  p.seqById.set(snapshot.snapshotId, p.base + p.snapshotId.length);
  p.snapshotId.push(snapshot.snapshotId);
  p.tokenId.push(snapshot.tokenId);
  p.ts.push(snapshot.ts);
  writeRawVector(inputs, p.raw, p.raw.length);
}

/**
 * Makes a snapshot a candidate once its 24h outcome is known. Resolutions of one horizon
 * arrive in subject time order (the outcomes module resolves in arrival order), so pending
 * snapshots older than this subject have no outcome coming (e.g. no price to measure from)
 * and are dropped. Returns the sequence numbers of the pending snapshots it took out, the
 * one resolved and those dropped.
 */
export function onResolution(state: AnalogsState, resolution: OutcomeResolution): number[] {
  const { subject } = resolution;
  const takenOut: number[] = [];
  if (subject.kind !== 'snapshot' || resolution.horizon !== '24h') return takenOut;
  const p = state.pending;
  const seq = p.seqById.get(subject.subjectId);
  if (seq !== undefined) {
    takenOut.push(seq);
    const i = seq - p.base;
    p.seqById.delete(subject.subjectId);
    addCandidate(state, {
      snapshotId: subject.subjectId,
      tokenId: p.tokenId[i],
      ts: p.ts[i],
      resolvedAt: resolution.resolvedAt,
      return24h: resolution.forwardReturn,
      maxDrawdown24h: resolution.maxDrawdown,
      raw: p.raw,
      rawOffset: i * D,
    });
  }
  while (p.head < p.snapshotId.length) {
    const id = p.snapshotId[p.head];
    const live = p.seqById.get(id) === p.base + p.head;
    if (live && p.ts[p.head] >= subject.ts) break;
    if (live) {
      p.seqById.delete(id);
      takenOut.push(p.base + p.head);
    }
    p.head++;
  }
  // Splice once the passed prefix is most of the arrays: O(1) amortised per snapshot.
  if (p.head > 0 && p.head * 2 >= p.snapshotId.length) {
    p.snapshotId.splice(0, p.head);
    p.tokenId.splice(0, p.head);
    p.ts.splice(0, p.head);
    p.raw.splice(0, p.head * D);
    p.base += p.head;
    p.head = 0;
  }
  return takenOut;
}

interface NewCandidate {
  snapshotId: string;
  tokenId: string;
  ts: number;
  resolvedAt: number;
  return24h: number | null;
  maxDrawdown24h: number | null;
  raw: ArrayLike<number>;
  rawOffset: number;
}

function tokenCode(state: AnalogsState, tokenId: string): number {
  let code = state.tokenCodes.get(tokenId);
  if (code === undefined) {
    code = state.tokenIds.length;
    state.tokenCodes.set(tokenId, code);
    state.tokenIds.push(tokenId);
  }
  return code;
}

function grow<T extends Float64Array | Float32Array | Int32Array | Uint8Array>(a: T, length: number): T {
  if (a.length >= length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(length, a.length * 2));
  b.set(a);
  return b;
}

function addCandidate(state: AnalogsState, c: NewCandidate): void {
  const cs = state.candidates;
  const i = cs.count;
  cs.token = grow(cs.token, i + 1);
  cs.ts = grow(cs.ts, i + 1);
  cs.resolvedAt = grow(cs.resolvedAt, i + 1);
  cs.return24h = grow(cs.return24h, i + 1);
  cs.maxDrawdown24h = grow(cs.maxDrawdown24h, i + 1);
  cs.raw = grow(cs.raw, (i + 1) * D);
  cs.missing = grow(cs.missing, i + 1);
  cs.snapshotId.push(c.snapshotId);
  cs.token[i] = tokenCode(state, c.tokenId);
  cs.ts[i] = c.ts;
  cs.resolvedAt[i] = c.resolvedAt;
  cs.return24h[i] = c.return24h ?? NaN;
  cs.maxDrawdown24h[i] = c.maxDrawdown24h ?? NaN;
  for (let d = 0; d < D; d++) cs.raw[i * D + d] = c.raw[c.rawOffset + d];
  cs.missing[i] = missingCount(cs.raw, i * D);
  cs.count = i + 1;
  const tailIndex = i - state.tree.size;
  state.tail = grow(state.tail, (tailIndex + 1) * D);
  standardiseInto(state.standardisation, cs.raw, i * D, state.tail, tailIndex * D);
  if (tailIndex + 1 >= state.tree.size * REBUILD_TAIL_FRACTION) rebuildIndex(state);
}

/** Refits the standardisation over the first n candidates (all by default) and indexes them. */
export function rebuildIndex(state: AnalogsState, n = state.candidates.count): void {
  const cs = state.candidates;
  state.standardisation = fitStandardisation(cs.raw, n);
  const z = new Float32Array(n * D);
  for (let i = 0; i < n; i++) standardiseInto(state.standardisation, cs.raw, i * D, z, i * D);
  state.tree = buildKdTree(z, cs.resolvedAt, cs.token, cs.ts, n);
  state.tail = new Float32Array(Math.max(INITIAL_CAPACITY, n >> 3) * D);
}

/** Checks k is an integer in 1..ANALOG_K_MAX; the API validates before, this guards the contract. */
export function assertK(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > ANALOG_K_MAX) throw new RangeError(`k must be an integer from 1 to ${ANALOG_K_MAX}, got ${k}`);
}

/** The k nearest eligible candidates to the query, nearest first, and their summary. */
export function queryAnalogs(state: AnalogsState, query: AnalogQuery, k: number): AnalogResult {
  assertK(k);
  const raw = new Float64Array(D);
  writeRawVector(query.inputs, raw, 0);
  const q = new Float64Array(D);
  const queryImputed = standardiseInto(state.standardisation, raw, 0, q, 0);
  const cs = state.candidates;
  const filter: CandidateFilter = { t: query.ts, token: state.tokenCodes.get(query.tokenId) ?? -1, windowMs: SAME_TOKEN_WINDOW_MS };
  const top = new TopK(k, cs.snapshotId);
  searchKdTree(state.tree, q, filter, top);
  const tailCount = cs.count - state.tree.size;
  scanBlock(state.tail, tailCount, state.tree.size, cs.resolvedAt, cs.token, cs.ts, q, filter, top);
  const found = top.sorted();
  const neighbours = found.map(({ candidate: c, d2 }): AnalogNeighbour => ({
    snapshotId: cs.snapshotId[c],
    tokenId: state.tokenIds[cs.token[c]],
    ts: cs.ts[c],
    distance: Math.sqrt(d2),
    return24h: nullIfNaN(cs.return24h[c]),
    maxDrawdown24h: nullIfNaN(cs.maxDrawdown24h[c]),
  }));
  let neighbourImputed = 0;
  for (const { candidate } of found) neighbourImputed += cs.missing[candidate];
  const imputedShare = Math.max(queryImputed / D, found.length > 0 ? neighbourImputed / (found.length * D) : 0);
  return { neighbours, summary: summarise(neighbours, imputedShare) };
}

function nullIfNaN(x: number): number | null {
  return x === x ? x : null;
}

/** Spec 2.5 over the neighbours: nulls are left out of each statistic; see CONFIDENCE_RULES. */
export function summarise(neighbours: readonly AnalogNeighbour[], imputedShare: number): AnalogSummary {
  const n = neighbours.length;
  const returns = neighbours.flatMap((a) => (a.return24h === null ? [] : [a.return24h])).sort((a, b) => a - b);
  const drawdowns = neighbours.flatMap((a) => (a.maxDrawdown24h === null ? [] : [a.maxDrawdown24h]));
  const m = returns.length;
  const median24h = m === 0 ? null : m % 2 === 1 ? returns[(m - 1) / 2] : (returns[m / 2 - 1] + returns[m / 2]) / 2;
  const gap = n === 0 ? Infinity : neighbours.reduce((s, a) => s + a.distance, 0) / n / Math.sqrt(D);
  return {
    n,
    median24h,
    worstDrawdown24h: drawdowns.length === 0 ? null : Math.min(...drawdowns),
    positiveShare: m === 0 ? null : returns.filter((r) => r > 0).length / m,
    confidence: confidenceOf(n, gap, imputedShare),
  };
}

function confidenceOf(n: number, gap: number, imputedShare: number): Confidence {
  const r = CONFIDENCE_RULES;
  if (n < r.lowBelowN || gap > r.lowAboveGap || imputedShare > r.lowAboveImputed) return 'LOW';
  if (n >= r.highMinN && gap <= r.highMaxGap && imputedShare <= r.highMaxImputed) return 'HIGH';
  return 'MEDIUM';
}

/** Copies candidates [from, to) (all by default) out as columns. */
export function candidateColumns(state: AnalogsState, from = 0, to = state.candidates.count): AnalogCandidateColumns {
  const cs = state.candidates;
  return {
    count: to - from,
    snapshotId: cs.snapshotId.slice(from, to),
    tokenId: Array.from(cs.token.subarray(from, to), (code) => state.tokenIds[code]),
    ts: cs.ts.slice(from, to),
    resolvedAt: cs.resolvedAt.slice(from, to),
    return24h: cs.return24h.slice(from, to),
    maxDrawdown24h: cs.maxDrawdown24h.slice(from, to),
    raw: cs.raw.slice(from * D, to * D),
  };
}

/** A state holding exactly these candidates (nothing pending), indexed in one build. */
export function analogsStateFromColumns(columns: AnalogCandidateColumns): AnalogsState {
  const state = withCandidates(columns);
  rebuildIndex(state);
  return state;
}

function withCandidates(columns: AnalogCandidateColumns): AnalogsState {
  const state = createAnalogsState();
  const n = columns.count;
  const cs = emptyCandidates(Math.max(n, 1));
  for (let i = 0; i < n; i++) {
    cs.snapshotId.push(columns.snapshotId[i]);
    cs.token[i] = tokenCode(state, columns.tokenId[i]);
    cs.missing[i] = missingCount(columns.raw, i * D);
  }
  cs.ts.set(columns.ts.subarray(0, n));
  cs.resolvedAt.set(columns.resolvedAt.subarray(0, n));
  cs.return24h.set(columns.return24h.subarray(0, n));
  cs.maxDrawdown24h.set(columns.maxDrawdown24h.subarray(0, n));
  cs.raw.set(columns.raw.subarray(0, n * D));
  cs.count = n;
  state.candidates = cs;
  return state;
}

/** Where a pool stands: what a copy of it kept elsewhere (the analogs stage's tables) needs to follow it. */
export interface PoolPosition {
  candidates: number;
  /** Candidates in the index, as of its last rebuild. */
  indexed: number;
  /** Sequence numbers of the first pending snapshot not yet passed, and of the next one taken in. */
  pendingHead: number;
  pendingNext: number;
}

export function poolPosition(state: AnalogsState): PoolPosition {
  const p = state.pending;
  return { candidates: state.candidates.count, indexed: state.tree.size, pendingHead: p.base + p.head, pendingNext: p.base + p.snapshotId.length };
}

/** A snapshot waiting for its 24h outcome, with its sequence number, as kept elsewhere. */
export interface PendingSnapshot {
  seq: number;
  snapshotId: string;
  tokenId: string;
  ts: number;
  /** D raw components (vector.ts), NaN where missing. */
  raw: number[];
}

/** The pending snapshot taken in with sequence number `seq`, while it waits. */
export function pendingSnapshot(state: AnalogsState, seq: number): PendingSnapshot {
  const p = state.pending;
  const i = seq - p.base;
  return { seq, snapshotId: p.snapshotId[i], tokenId: p.tokenId[i], ts: p.ts[i], raw: p.raw.slice(i * D, (i + 1) * D) };
}

/**
 * The pool a copy kept elsewhere describes: the candidates, indexed as the pool was at
 * `position` (the index over the first `indexed`, standardised as fitted then, the rest
 * scanned), and the snapshots still waiting. It answers and grows exactly as the pool did.
 */
export function restoreAnalogsState(columns: AnalogCandidateColumns, position: PoolPosition, pending: readonly PendingSnapshot[]): AnalogsState {
  const state = withCandidates(columns);
  rebuildIndex(state, position.indexed);
  const cs = state.candidates;
  for (let i = position.indexed; i < cs.count; i++) {
    const tailIndex = i - position.indexed;
    state.tail = grow(state.tail, (tailIndex + 1) * D);
    standardiseInto(state.standardisation, cs.raw, i * D, state.tail, tailIndex * D);
  }
  // Sequence numbers without a snapshot are those resolved or dropped: not live, as in the pool.
  const p = state.pending;
  const n = position.pendingNext - position.pendingHead;
  p.base = position.pendingHead;
  p.snapshotId = new Array<string>(n).fill('');
  p.tokenId = new Array<string>(n).fill('');
  p.ts = new Array<number>(n).fill(-Infinity);
  p.raw = new Array<number>(n * D).fill(NaN);
  for (const snapshot of pending) {
    const i = snapshot.seq - p.base;
    p.snapshotId[i] = snapshot.snapshotId;
    p.tokenId[i] = snapshot.tokenId;
    p.ts[i] = snapshot.ts;
    for (let d = 0; d < D; d++) p.raw[i * D + d] = snapshot.raw[d];
    p.seqById.set(snapshot.snapshotId, snapshot.seq);
  }
  return state;
}
