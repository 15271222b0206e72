import { TOPICS } from '../../../schemas/catalogue.ts';
import type { MarketTick, TokenMeta } from '../../../schemas/records.ts';
import type { Outcome } from '../../../schemas/records/quant-market.ts';
import { HORIZON_MS, HORIZONS, type Emitter, type OutcomeResolution, type OutcomeSubject } from '../contracts.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';
import { clear, dropThrough, emptyDeque, pushMax, pushMin, timeAt, valueAt, windowFront, type ChunkedDeque, type DequeChunks } from './chunked-deque.ts';

/**
 * Forward outcomes of tracked subjects (snapshots and authors' calls) at every horizon.
 *
 * A subject at ts resolves at horizon h once event time passes ts + h, over the ticks in
 * (ts, ts + h]. Per token, monotonic deques hold the running max and min of price and the
 * min of liquidity over the ticks since the oldest pending subject; subjects resolve in time
 * order, so the longest horizon's resolutions only drop ticks from the deques' fronts. A tick
 * costs O(1) amortised, a resolution a binary search; no price history is ever scanned. The
 * deques are kept in chunks (chunked-deque.ts): a tick changes the token's value only, where
 * each deque's open chunk lives, and a chunk is written apart once, as it fills.
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
 * One deque per measure serves every horizon: a horizon's window is a suffix of the same tick
 * sequence, and the first live triple inside a suffix is that suffix's extreme (earliest on
 * ties), so a resolution finds it by binary search instead of each tick going into six deques.
 */
interface TokenTrack {
  lastTs: number;
  lastPrice: number | null;
  lastLiquidity: number | null;
  /** Changes of dead-ness from TokenMeta status, sorted by time; a token starts alive. */
  deadChanges: { ts: number; dead: boolean }[];
  /** Sequence number of the next tick pushed into the deques. */
  seq: number;
  /** Per horizon: subjects of this token still waiting for it. */
  pending: number[];
  /** Per horizon: sequence number of its first tick, set when its pending count leaves zero. */
  start: number[];
  /** Prices, non-increasing from the front: the front is the earliest highest price. */
  max: ChunkedDeque;
  /** Prices, non-decreasing from the front. */
  min: ChunkedDeque;
  /** Liquidity, non-decreasing from the front. */
  liq: ChunkedDeque;
}

type Measure = 'max' | 'min' | 'liq';

/**
 * Tracked subjects in the order they arrived, which is time order, numbered from 0, in blocks
 * of SUBJECT_BLOCK held as columns (a million pending subjects must stay cheap to hold and to
 * checkpoint: tracking one changes only the last block). Each horizon resolves them in this
 * same order, so a horizon's queue is just a cursor into them; a block goes once the longest
 * horizon, always the furthest behind, has resolved all of it.
 */
interface SubjectBlock {
  kind: OutcomeSubject['kind'][];
  subjectId: string[];
  tokenId: string[];
  ts: number[];
  entryPrice: number[];
  /** Liquidity of the token's last tick at entry; NaN when it had no tick yet. */
  entryLiquidity: number[];
}

/** Where the queue of subjects stands, under one key. */
interface SubjectQueue {
  /** Number of the next subject tracked. */
  count: number;
  /** Per horizon (HORIZONS order): number of the next subject to resolve. */
  next: number[];
  /**
   * No subject is due before this time (at most the earliest due of the horizons' next ones):
   * most records then cost one read of the queue, not a look at each horizon's next subject.
   */
  dueFrom: number;
  /** Time of the latest subject tracked: subjects must come in time order. */
  lastSubjectTs: number;
  /** Subjects refused because they were older than one already tracked. */
  refused: number;
}

/**
 * Kept in tables (runtime/state/tables.ts), so a task's store on disk writes at a checkpoint
 * only the tokens that ticked, the chunks of their deques that filled, the blocks of subjects
 * that changed and the queue.
 */
export interface OutcomesState {
  tokens: KeyedTable<TokenTrack>;
  /** `<token>\u0001<measure>\u0001<chunk number>` → that full chunk of the token's deque of that measure. */
  dequeChunks: KeyedTable<number[]>;
  /** Block number → its subjects. */
  subjects: KeyedTable<SubjectBlock>;
  queue: KeyedTable<SubjectQueue>;
}

const SUBJECT_BLOCK = 256;
const QUEUE_KEY = 'queue';

// Module-level copies: the hot loops then read plain locals, not imported bindings.
const HORIZON_LIST = [...HORIZONS];
const DURATIONS = HORIZON_LIST.map((h) => HORIZON_MS[h]);
/** Index of the longest horizon: its cursor is always the furthest behind. */
const LONGEST = DURATIONS.indexOf(Math.max(...DURATIONS));
const SHORTEST_MS = Math.min(...DURATIONS);

/** `name` prefixes the tables, so that one state may hold several such modules. */
export function createOutcomesState(tables: TableSource = IN_MEMORY_TABLES, name = 'outcomes'): OutcomesState {
  return {
    tokens: tables.table(`${name}-tokens`),
    dequeChunks: tables.table(`${name}-deque-chunks`),
    subjects: tables.table(`${name}-subjects`),
    queue: tables.table(`${name}-queue`),
  };
}

function chunksOf(state: OutcomesState, tokenId: string, measure: Measure): DequeChunks {
  return { table: state.dequeChunks, prefix: `${tokenId}\u0001${measure}\u0001` };
}

function queueOf(state: OutcomesState): SubjectQueue {
  return state.queue.get(QUEUE_KEY) ?? { count: 0, next: HORIZON_LIST.map(() => 0), dueFrom: Infinity, lastSubjectTs: -Infinity, refused: 0 };
}

/** Subjects refused because they were older than one already tracked. */
export function refusedSubjects(state: OutcomesState): number {
  return queueOf(state).refused;
}

/** Time of the latest subject tracked, -Infinity before the first. */
export function lastSubjectTime(state: OutcomesState): number {
  return queueOf(state).lastSubjectTs;
}

/**
 * Starts tracking a subject at every horizon, with the liquidity at entry (by default the
 * token's latest; the outcomes stage passes what the engine recorded). Subjects must arrive
 * in time order (the engine tracks snapshots as they are emitted and calls at their post's
 * time): an older subject would need ticks already dropped, so it is refused (returns false)
 * and counted.
 */
export function trackSubject(state: OutcomesState, subject: OutcomeSubject, entryLiquidity = latestLiquidity(state, subject.tokenId)): boolean {
  if (!admitSubject(state, subject.ts)) return false;
  const queue = queueOf(state);
  const blockKey = String(Math.floor(queue.count / SUBJECT_BLOCK));
  const block = queue.count % SUBJECT_BLOCK === 0 ? emptyBlock() : state.subjects.get(blockKey)!;
  block.kind.push(subject.kind);
  block.subjectId.push(subject.subjectId);
  block.tokenId.push(subject.tokenId);
  block.ts.push(subject.ts);
  block.entryPrice.push(subject.entryPrice);
  block.entryLiquidity.push(entryLiquidity ?? Number.NaN);
  state.subjects.set(blockKey, block);
  queue.count++;
  // A horizon that had nothing pending now waits for this subject, due no sooner than this.
  queue.dueFrom = Math.min(queue.dueFrom, subject.ts + SHORTEST_MS);
  state.queue.set(QUEUE_KEY, queue);
  const token = tokenTrack(state, subject.tokenId);
  for (let h = 0; h < DURATIONS.length; h++) if (token.pending[h]++ === 0) token.start[h] = token.seq;
  state.tokens.set(subject.tokenId, token);
  return true;
}

function emptyBlock(): SubjectBlock {
  return { kind: [], subjectId: [], tokenId: [], ts: [], entryPrice: [], entryLiquidity: [] };
}

/**
 * Whether a subject at `ts` would be tracked, as trackSubject decides, counting it as tracked
 * without keeping it: for subjects whose outcomes another stage measures (the engine's
 * snapshots, which only the analogs stage resolves) while the order check stays the same.
 */
export function admitSubject(state: OutcomesState, ts: number): boolean {
  const queue = queueOf(state);
  const admitted = ts >= queue.lastSubjectTs;
  if (admitted) queue.lastSubjectTs = ts;
  else queue.refused++;
  state.queue.set(QUEUE_KEY, queue);
  return admitted;
}

/** Liquidity of the token's latest tick, which a subject tracked now takes as its entry; null before any. */
export function latestLiquidity(state: OutcomesState, tokenId: string): number | null {
  return state.tokens.get(tokenId)?.lastLiquidity ?? null;
}

/** Time of the token's latest tick taken in, -Infinity before any: an earlier tick is ignored. */
export function latestTickTime(state: OutcomesState, tokenId: string): number {
  return state.tokens.get(tokenId)?.lastTs ?? -Infinity;
}

/** Ticks older than the token's latest one are ignored here: the deques are in time order. */
export function outcomesOnTick(state: OutcomesState, tick: MarketTick): void {
  const token = tokenTrack(state, tick.tokenId);
  if (tick.ts < token.lastTs) return;
  token.lastTs = tick.ts;
  token.lastPrice = tick.priceUsd;
  token.lastLiquidity = tick.liquidityUsd;
  // The longest horizon waits for every subject any other horizon waits for; with none
  // pending, no subject needs ticks from before its own time.
  if (token.pending[LONGEST] > 0) {
    const seq = token.seq++;
    pushMax(chunksOf(state, tick.tokenId, 'max'), token.max, tick.ts, seq, tick.priceUsd);
    pushMin(chunksOf(state, tick.tokenId, 'min'), token.min, tick.ts, seq, tick.priceUsd);
    pushMin(chunksOf(state, tick.tokenId, 'liq'), token.liq, tick.ts, seq, tick.liquidityUsd);
  }
  state.tokens.set(tick.tokenId, token);
}

export function outcomesOnTokenMeta(state: OutcomesState, meta: TokenMeta): void {
  const token = tokenTrack(state, meta.tokenId);
  const changes = token.deadChanges;
  const dead = DEAD_STATUSES.includes(meta.status);
  let i = changes.length;
  while (i > 0 && changes[i - 1].ts > meta.ts) i--;
  const before = i > 0 ? changes[i - 1].dead : false;
  if (before === dead) return;
  changes.splice(i, 0, { ts: meta.ts, dead });
  state.tokens.set(meta.tokenId, token);
}

/**
 * Resolves and returns every subject-horizon pair with ts + h < t, in order of resolvedAt,
 * and emits each (quant.outcomes, keyed by token id, timestamp resolvedAt) when given an
 * emitter: the outcomes stage emits them, the engine only uses them. Call it with each
 * event's time before applying the event, after tracking the subjects due by then.
 */
export function advanceOutcomes(state: OutcomesState, t: number, emitter?: Emitter): OutcomeResolution[] {
  const resolutions: OutcomeResolution[] = [];
  const queue = queueOf(state);
  if (queue.dueFrom >= t) return resolutions;
  // Per horizon, when its next subject is due (Infinity when none is pending).
  const dues = DURATIONS.map((_, k) => dueOf(state, queue, k));
  for (;;) {
    let h = 0;
    for (let k = 1; k < dues.length; k++) if (dues[k] < dues[h]) h = k;
    const due = dues[h];
    if (due >= t) {
      queue.dueFrom = due;
      state.queue.set(QUEUE_KEY, queue);
      return resolutions;
    }
    const resolution = resolve(state, queue.next[h]++, h);
    emitter?.emit({ topic: OUTCOMES_TOPIC, key: resolution.subject.tokenId, value: toRecord(resolution, emitter), timestamp: due });
    resolutions.push(resolution);
    // The longest horizon is the last to leave a block: then no horizon needs it.
    if (h === LONGEST && queue.next[h] % SUBJECT_BLOCK === 0) state.subjects.delete(String(queue.next[h] / SUBJECT_BLOCK - 1));
    dues[h] = dueOf(state, queue, h);
  }
}

function dueOf(state: OutcomesState, queue: SubjectQueue, h: number): number {
  const n = queue.next[h];
  if (n >= queue.count) return Infinity;
  return state.subjects.get(String(Math.floor(n / SUBJECT_BLOCK)))!.ts[n % SUBJECT_BLOCK] + DURATIONS[h];
}

function resolve(state: OutcomesState, n: number, h: number): OutcomeResolution {
  const s = state.subjects.get(String(Math.floor(n / SUBJECT_BLOCK)))!;
  const i = n % SUBJECT_BLOCK;
  const ts = s.ts[i];
  const entry = s.entryPrice[i];
  const tokenId = s.tokenId[i];
  const token = state.tokens.get(tokenId)!;
  const end = ts + DURATIONS[h];
  // The deques hold the ticks up to end; the window is those after the subject's time, from the horizon's start on.
  const start = token.start[h];
  const { max, min, liq } = token;
  const maxChunks = chunksOf(state, tokenId, 'max');
  const minChunks = chunksOf(state, tokenId, 'min');
  const liqChunks = chunksOf(state, tokenId, 'liq');
  const maxAt = windowFront(maxChunks, max, ts, start);
  const hasTicks = maxAt < max.tail;
  const maxPrice = hasTicks ? valueAt(maxChunks, max, maxAt) : entry;
  const minPrice = hasTicks ? valueAt(minChunks, min, windowFront(minChunks, min, ts, start)) : entry;
  const priced = entry > 0 && Number.isFinite(entry);
  // NaN entry liquidity (no tick before entry) never compares below anything.
  const diedByLiquidity =
    hasTicks && valueAt(liqChunks, liq, windowFront(liqChunks, liq, ts, start)) < DIED_LIQUIDITY_FRACTION * s.entryLiquidity[i];
  const resolution: OutcomeResolution = {
    subject: { kind: s.kind[i], subjectId: s.subjectId[i], tokenId, ts, entryPrice: entry },
    horizon: HORIZON_LIST[h],
    resolvedAt: end,
    forwardReturn: priced && token.lastPrice !== null ? token.lastPrice / entry - 1 : null,
    maxDrawdown: priced ? Math.min(0, minPrice / entry - 1) : null,
    peakReturn: priced ? Math.max(0, maxPrice / entry - 1) : null,
    timeToPeakMs: priced ? (maxPrice > entry ? timeAt(maxChunks, max, maxAt) - ts : 0) : null,
    died: diedByLiquidity || deadDuring(token.deadChanges, ts, end),
    lastPrice: token.lastPrice,
  };
  token.pending[h]--;
  if (h === LONGEST) {
    if (token.pending[h] === 0) {
      clear(maxChunks, max);
      clear(minChunks, min);
      clear(liqChunks, liq);
    } else {
      // Every subject still pending, at any horizon, is at or after this one's time.
      dropThrough(maxChunks, max, ts);
      dropThrough(minChunks, min, ts);
      dropThrough(liqChunks, liq, ts);
    }
  }
  state.tokens.set(tokenId, token);
  return resolution;
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
      seq: 0,
      pending: DURATIONS.map(() => 0),
      start: DURATIONS.map(() => 0),
      max: emptyDeque(),
      min: emptyDeque(),
      liq: emptyDeque(),
    };
    state.tokens.set(tokenId, token);
  }
  return token;
}
