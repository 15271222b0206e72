import type { AuthorCall, AuthorConfidence, AuthorMetrics } from '../../../schemas/records/quant-social.ts';
import type {
  AuthorQualityLookup,
  Emitter,
  Mention,
  OutcomeResolution,
  OutcomeSubject,
  PriceLookup,
  TokenLookup,
} from '../contracts.ts';
import { AUTHOR_METRICS_MODEL, computeMetrics, type CallRecord } from './metrics.ts';
import { TOPICS } from '../../../schemas/catalogue.ts';
import { appendToBlocks, readBlocks } from '../../runtime/state/block-lists.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';

/**
 * Authors: turns mentions into calls, follows each call's outcome and crowd, and publishes
 * point-in-time versions of every author's track record.
 *
 * A call is an author's first mention of a token, or the first after 7 days without
 * mentioning it. Priced calls go to the outcomes module as subjects; their 24h resolutions
 * come back through `onOutcome`. A call's lead time ends when the token first has a crowd
 * (10 unique authors within an hour) at or after the call. New resolutions and lead times
 * mark the author; `advanceTo` publishes marked authors once per event-time hour, as of
 * the hour's start, from what resolved before it. The lookups read the latest published
 * version, so every consumer joins exactly what quant.author-metrics holds.
 *
 * Kept in tables (runtime/state/tables.ts), so that a task's store on disk writes at a
 * checkpoint the few small keys the events since the last one changed: an author's calls are
 * in blocks, of which a new call rewrites the last and an outcome or a crowd the call's own.
 * What is iterated (authors for the directory, authors to publish, tokens to sweep) is an
 * ordered list under a key of its own, so that it goes in the same order from a store as from
 * Maps.
 */

export const CALLS_TOPIC = TOPICS.calls.name;
export const AUTHOR_METRICS_TOPIC = TOPICS.authorMetrics.name;

const HOUR_MS = 3_600_000;
/** A mention after this long without mentioning the token is a new call. */
export const CALL_GAP_MS = 7 * 24 * HOUR_MS;
/** Unique authors on a token within the trailing hour that make a crowd. */
export const CROWD_AUTHORS = 10;
/** A crowd that comes later than this after a call does not count as the call's lead. */
export const LEAD_HORIZON_MS = 7 * 24 * HOUR_MS;

/** The latest published metrics of an author, as other modules see them. */
export interface AuthorStanding {
  authorId: string;
  handle: string;
  /** Null before the first published version or below the score's minimum sample. */
  researchScore: number | null;
  confidence: AuthorConfidence | null;
  leadTimeSamples: number;
  medianLeadTimeMs: number | null;
}

/** Every author seen in a mention, by id or handle, with their latest published standing. */
export interface AuthorDirectory {
  get(authorId: string): AuthorStanding | undefined;
  /** Case-insensitive, with or without a leading @; the author who last posted under it. */
  byHandle(handle: string): AuthorStanding | undefined;
  all(): Iterable<AuthorStanding>;
}

/** How crowded a token is right now. */
export interface CrowdLookup {
  /** Unique authors who mentioned the token within the trailing hour. */
  uniqueAuthors1h(tokenId: string): number;
}

/** The module's scalars, under SCALARS_KEY. */
interface AuthorsScalars {
  /** Start of the current event-time hour; null before the first event. */
  hour: number | null;
  /** Largest event time seen. */
  now: number;
  /** Authors seen: the length of the list `authorIds` holds. */
  authorCount: number;
}

/** What publishing an author needs besides the author's calls and standing. */
interface AuthorRecord {
  /** Number of the author's calls, in the author's blocks of `calls`. */
  callCount: number;
  version: number;
  /** Earliest time of a resolution or lead time not yet published; null when none. */
  pendingFrom: number | null;
  /** Latest time of a resolution or lead time received. */
  lastDataAt: number;
}

/** Mentions of a token within the trailing hour, oldest first: authors[i] at times[i]. */
interface CrowdWindow {
  authors: string[];
  times: number[];
}

/** A priced call: its author, its number among the author's calls, and its time (for the lead horizon). */
interface CallRef {
  authorId: string;
  index: number;
  ts: number;
}

export interface AuthorsState {
  /** Under SCALARS_KEY only. */
  scalars: KeyedTable<AuthorsScalars>;
  /** Author id → latest published standing, under the author's current handle: what the lookups read. */
  standings: KeyedTable<AuthorStanding>;
  /** Author id → AuthorRecord. */
  records: KeyedTable<AuthorRecord>;
  /** Block number → author ids in first-seen order (the directory's order), AUTHOR_ID_BLOCK per block. */
  authorIds: KeyedTable<string[]>;
  /** `${authorId}\u0001${block number}` → the author's calls in order, CALL_BLOCK per block. */
  calls: KeyedTable<CallRecord[]>;
  /** `${authorId}\u0001${tokenId}` → the author's latest mention time of the token, for the 7-day call gap. */
  lastMention: KeyedTable<number>;
  /** Lower-case handle → author id. */
  handles: KeyedTable<string>;
  /** Priced calls waiting for their 24h outcome, by call id. */
  openCalls: KeyedTable<CallRef>;
  /** Token id → its priced calls waiting (up to 7 days) for the token's crowd. */
  awaitingCrowd: KeyedTable<CallRef[]>;
  /** Token id → its crowd window. */
  crowds: KeyedTable<CrowdWindow>;
  /**
   * Ordered lists: under DIRTY_KEY the authors with a pending publication, in the order first
   * marked; under AWAITING_KEY and CROWDS_KEY the tokens `awaitingCrowd` and `crowds` hold, in
   * the order added (a token removed and added again goes last, as in a Map).
   */
  lists: KeyedTable<string[]>;
}

const SCALARS_KEY = 'scalars';
const DIRTY_KEY = 'dirty';
const AWAITING_KEY = 'awaiting-tokens';
const CROWDS_KEY = 'crowd-tokens';
/** Calls per block: a block is rewritten whole when one of its calls changes. */
const CALL_BLOCK = 64;
const AUTHOR_ID_BLOCK = 256;

export function createAuthorsState(tables: TableSource = IN_MEMORY_TABLES): AuthorsState {
  return {
    scalars: tables.table('authors-scalars'),
    standings: tables.table('authors-standings'),
    records: tables.table('authors-records'),
    authorIds: tables.table('authors-ids'),
    calls: tables.table('authors-calls'),
    lastMention: tables.table('authors-last-mention'),
    handles: tables.table('authors-handles'),
    openCalls: tables.table('authors-open-calls'),
    awaitingCrowd: tables.table('authors-awaiting-crowd'),
    crowds: tables.table('authors-crowds'),
    lists: tables.table('authors-lists'),
  };
}

const hourStart = (t: number) => t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS);
const normaliseHandle = (handle: string) => handle.replace(/^@/, '').toLowerCase();
const callBlockPrefix = (authorId: string) => `${authorId}\u0001`;

function scalarsOf(state: AuthorsState): AuthorsScalars {
  return state.scalars.get(SCALARS_KEY) ?? { hour: null, now: 0, authorCount: 0 };
}

/**
 * Moves event time to `t` (call before applying each event at t). On entering a new hour,
 * publishes every author with resolutions or lead times from before it.
 */
export function advanceTo(state: AuthorsState, t: number, emitter: Emitter): void {
  const scalars = scalarsOf(state);
  const hour = hourStart(t);
  // The first event starts the clock; a later hour publishes and sweeps.
  const entered = scalars.hour !== null && hour > scalars.hour;
  const now = Math.max(scalars.now, t);
  if (scalars.hour === null || entered || now !== scalars.now) {
    state.scalars.set(SCALARS_KEY, { ...scalars, now, hour: scalars.hour === null || entered ? hour : scalars.hour });
  }
  if (!entered) return;
  publish(state, hour, emitter);
  sweep(state, t);
}

/**
 * Applies a mention. Returns the outcome subject when the mention is a priced call, for the
 * engine to hand to the outcomes module; null otherwise. The subject's ts is the current
 * event time, never earlier than a subject returned before.
 */
export function onMention(
  state: AuthorsState,
  mention: Mention,
  emitter: Emitter,
  tokens: TokenLookup,
  prices: PriceLookup,
): OutcomeSubject | null {
  // A mention slightly older than the newest event joins the windows at the current time.
  const at = Math.max(mention.ts, scalarsOf(state).now);
  noteAuthor(state, mention.authorId, mention.authorHandle);
  const crowd = addToCrowd(state, mention.tokenId, mention.authorId, at);

  const mentionKey = `${mention.authorId}\u0001${mention.tokenId}`;
  const last = state.lastMention.get(mentionKey);
  if (last === undefined || mention.ts > last) state.lastMention.set(mentionKey, mention.ts);
  let subject: OutcomeSubject | null = null;
  if (last === undefined || mention.ts - last >= CALL_GAP_MS) {
    subject = registerCall(state, mention, at, emitter, tokens, prices);
  }

  // Calls made into an existing crowd (this one included) get a lead time of zero.
  const waiting = state.awaitingCrowd.get(mention.tokenId);
  if (waiting && uniqueAuthors(crowd) >= CROWD_AUTHORS) {
    for (const ref of waiting) {
      if (at - ref.ts > LEAD_HORIZON_MS) continue;
      updateCall(state, ref, { crowdAt: at });
      markPending(state, ref.authorId, at);
    }
    state.awaitingCrowd.delete(mention.tokenId);
    removeFromList(state, AWAITING_KEY, mention.tokenId);
  }
  return subject;
}

/** Applies an outcome resolution from the outcomes module; only 24h outcomes of calls are used. */
export function onOutcome(state: AuthorsState, resolution: OutcomeResolution): void {
  if (resolution.subject.kind !== 'call' || resolution.horizon !== '24h') return;
  const ref = state.openCalls.get(resolution.subject.subjectId);
  if (!ref) return;
  state.openCalls.delete(resolution.subject.subjectId);
  const { resolvedAt, forwardReturn, maxDrawdown, died } = resolution;
  updateCall(state, ref, { resolvedAt, forwardReturn, maxDrawdown, died });
  markPending(state, ref.authorId, resolvedAt);
}

/** Research score as of the latest published version (features' AuthorQualityLookup). */
export function authorQuality(state: AuthorsState): AuthorQualityLookup {
  return { researchScore: (authorId) => state.standings.get(authorId)?.researchScore ?? null };
}

export function authorDirectory(state: AuthorsState): AuthorDirectory {
  return {
    get: (authorId) => state.standings.get(authorId),
    byHandle: (handle) => {
      const id = state.handles.get(normaliseHandle(handle));
      return id === undefined ? undefined : state.standings.get(id);
    },
    // Read hourly (the cohorts rank every author): a read per author, in first-seen order.
    all: () => readBlocks(state.authorIds, '', AUTHOR_ID_BLOCK, scalarsOf(state).authorCount).map((id) => state.standings.get(id)!),
  };
}

export function crowdLookup(state: AuthorsState): CrowdLookup {
  return {
    // Counted without storing the shorter window: the next mention or sweep drops the same.
    uniqueAuthors1h: (tokenId) => {
      const window = state.crowds.get(tokenId);
      return window ? uniqueAuthors(evicted(window, scalarsOf(state).now)) : 0;
    },
  };
}

/** Records an author on first sight, and the handle they post under. */
function noteAuthor(state: AuthorsState, authorId: string, handle: string): void {
  const standing = state.standings.get(authorId);
  if (!standing) {
    state.standings.set(authorId, { authorId, handle, researchScore: null, confidence: null, leadTimeSamples: 0, medianLeadTimeMs: null });
    state.records.set(authorId, { callCount: 0, version: 0, pendingFrom: null, lastDataAt: 0 });
    const scalars = scalarsOf(state);
    appendToBlocks(state.authorIds, '', AUTHOR_ID_BLOCK, scalars.authorCount, authorId);
    state.scalars.set(SCALARS_KEY, { ...scalars, authorCount: scalars.authorCount + 1 });
  } else if (standing.handle !== handle) {
    state.standings.set(authorId, { ...standing, handle });
  }
  const handleKey = normaliseHandle(handle);
  if (state.handles.get(handleKey) !== authorId) state.handles.set(handleKey, authorId);
}

function registerCall(
  state: AuthorsState,
  mention: Mention,
  at: number,
  emitter: Emitter,
  tokens: TokenLookup,
  prices: PriceLookup,
): OutcomeSubject | null {
  const { authorId, tokenId } = mention;
  const price = prices.lastPrice(tokenId);
  const entryPrice = price !== null && Number.isFinite(price) && price > 0 ? price : null;
  const callId = emitter.id('call', authorId, tokenId, mention.ts);
  const narrative = tokens.get(tokenId)?.narrative ?? null;
  const call: CallRecord = {
    callId,
    tokenId,
    narrative,
    ts: mention.ts,
    entryPrice,
    resolvedAt: null,
    forwardReturn: null,
    maxDrawdown: null,
    died: false,
    crowdAt: null,
  };
  const record = state.records.get(authorId)!;
  const index = record.callCount;
  appendToBlocks(state.calls, callBlockPrefix(authorId), CALL_BLOCK, index, call);
  state.records.set(authorId, { ...record, callCount: index + 1 });
  const value: AuthorCall = {
    callId,
    authorId,
    handle: mention.authorHandle,
    tokenId,
    narrative,
    postId: mention.postId,
    ts: mention.ts,
    entryPrice,
  };
  emitter.emit({ topic: CALLS_TOPIC, key: authorId, value, timestamp: mention.ts });
  if (entryPrice === null) return null;

  const ref: CallRef = { authorId, index, ts: mention.ts };
  state.openCalls.set(callId, ref);
  const waiting = state.awaitingCrowd.get(tokenId);
  state.awaitingCrowd.set(tokenId, waiting ? [...waiting, ref] : [ref]);
  addToList(state, AWAITING_KEY, tokenId);
  // The outcome runs from the current event time, where the entry price was read; the
  // outcomes module also needs its subjects in time order, which post times are not quite.
  return { kind: 'call', subjectId: callId, tokenId, ts: at, entryPrice };
}

/** Sets what became known about a call, in a new copy of its block. */
function updateCall(state: AuthorsState, ref: CallRef, known: Partial<CallRecord>): void {
  const key = callBlockPrefix(ref.authorId) + Math.floor(ref.index / CALL_BLOCK);
  const block = [...state.calls.get(key)!];
  const i = ref.index % CALL_BLOCK;
  block[i] = { ...block[i], ...known };
  state.calls.set(key, block);
}

/** Adds `item` to the list under `key` unless it is there already, as a Set would. */
function addToList(state: AuthorsState, key: string, item: string): void {
  const list = state.lists.get(key) ?? [];
  if (!list.includes(item)) state.lists.set(key, [...list, item]);
}

function removeFromList(state: AuthorsState, key: string, item: string): void {
  state.lists.set(key, (state.lists.get(key) ?? []).filter((x) => x !== item));
}

function addToCrowd(state: AuthorsState, tokenId: string, authorId: string, at: number): CrowdWindow {
  const before = state.crowds.get(tokenId);
  if (!before) addToList(state, CROWDS_KEY, tokenId);
  // The new mention is inside the trailing hour, so dropping before adding it drops the same.
  const live = before ? evicted(before, at) : { authors: [], times: [] };
  const window = { authors: [...live.authors, authorId], times: [...live.times, at] };
  state.crowds.set(tokenId, window);
  return window;
}

/** The window without its mentions at or before `now` − 1h, from the front; the trailing hour is (now − 1h, now]. */
function evicted(window: CrowdWindow, now: number): CrowdWindow {
  const cutoff = now - HOUR_MS;
  let from = 0;
  while (from < window.times.length && window.times[from] <= cutoff) from++;
  return from === 0 ? window : { authors: window.authors.slice(from), times: window.times.slice(from) };
}

const uniqueAuthors = (window: CrowdWindow) => new Set(window.authors).size;

function markPending(state: AuthorsState, authorId: string, at: number): void {
  const record = state.records.get(authorId)!;
  state.records.set(authorId, {
    ...record,
    pendingFrom: record.pendingFrom === null ? at : Math.min(record.pendingFrom, at),
    lastDataAt: Math.max(record.lastDataAt, at),
  });
  addToList(state, DIRTY_KEY, authorId);
}

/** Publishes, as of `asOf`, every author with unpublished data from before it, reading all of that author's calls. */
function publish(state: AuthorsState, asOf: number, emitter: Emitter): void {
  const dirty = state.lists.get(DIRTY_KEY) ?? [];
  const stillDirty: string[] = [];
  for (const authorId of dirty) {
    const record = state.records.get(authorId)!;
    if (record.pendingFrom === null || record.pendingFrom >= asOf) {
      stillDirty.push(authorId);
      continue;
    }
    const m = computeMetrics(readBlocks(state.calls, callBlockPrefix(authorId), CALL_BLOCK, record.callCount), asOf);
    const version = record.version + 1;
    const { handle } = state.standings.get(authorId)!;
    const value: AuthorMetrics = {
      authorId,
      handle,
      ts: asOf,
      version,
      modelVersion: AUTHOR_METRICS_MODEL,
      ...m,
    };
    emitter.emit({ topic: AUTHOR_METRICS_TOPIC, key: authorId, value, timestamp: asOf });
    state.standings.set(authorId, {
      authorId,
      handle,
      researchScore: m.researchScore,
      confidence: m.confidence,
      leadTimeSamples: m.leadTimeSamples,
      medianLeadTimeMs: m.medianLeadTimeMs,
    });
    // Data from at or after asOf (delivered ahead of this hour's start) waits for the next hour.
    const waits = record.lastDataAt >= asOf;
    state.records.set(authorId, { ...record, version, pendingFrom: waits ? asOf : null });
    if (waits) stillDirty.push(authorId);
  }
  if (stillDirty.length < dirty.length) state.lists.set(DIRTY_KEY, stillDirty);
}

/**
 * Hourly housekeeping: forget crowd waits past the lead horizon and idle crowd windows. It
 * reads only the tokens the lists name: those with priced calls of the last 7 days and those
 * mentioned since the last sweep's hour.
 */
function sweep(state: AuthorsState, t: number): void {
  const awaiting = state.lists.get(AWAITING_KEY) ?? [];
  const stillAwaiting: string[] = [];
  for (const tokenId of awaiting) {
    const waiting = state.awaitingCrowd.get(tokenId)!;
    const alive = waiting.filter((ref) => t - ref.ts <= LEAD_HORIZON_MS);
    if (alive.length === 0) {
      state.awaitingCrowd.delete(tokenId);
      continue;
    }
    if (alive.length < waiting.length) state.awaitingCrowd.set(tokenId, alive);
    stillAwaiting.push(tokenId);
  }
  if (stillAwaiting.length < awaiting.length) state.lists.set(AWAITING_KEY, stillAwaiting);

  const crowded = state.lists.get(CROWDS_KEY) ?? [];
  const stillCrowded: string[] = [];
  for (const tokenId of crowded) {
    const before = state.crowds.get(tokenId)!;
    const window = evicted(before, t);
    if (window.times.length === 0) {
      state.crowds.delete(tokenId);
      continue;
    }
    if (window !== before) state.crowds.set(tokenId, window);
    stillCrowded.push(tokenId);
  }
  if (stillCrowded.length < crowded.length) state.lists.set(CROWDS_KEY, stillCrowded);
}
