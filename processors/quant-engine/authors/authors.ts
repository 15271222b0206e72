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

interface AuthorRecord {
  authorId: string;
  handle: string;
  calls: CallRecord[];
  /** Latest mention time per token, for the 7-day call gap. */
  lastMention: Map<string, number>;
  version: number;
  standing: AuthorStanding;
  /** Earliest time of a resolution or lead time not yet published; null when none. */
  pendingFrom: number | null;
  /** Latest time of a resolution or lead time received. */
  lastDataAt: number;
}

/** Authors who mentioned a token within the trailing hour, as a time-ordered queue. */
interface CrowdWindow {
  authors: string[];
  times: number[];
  head: number;
  counts: Map<string, number>;
}

interface CallRef {
  authorId: string;
  index: number;
}

export interface AuthorsState {
  /** Start of the current event-time hour; null before the first event. */
  hour: number | null;
  /** Largest event time seen. */
  now: number;
  authors: Map<string, AuthorRecord>;
  /** Lower-case handle → author id. */
  handles: Map<string, string>;
  /** Priced calls waiting for their 24h outcome, by call id. */
  openCalls: Map<string, CallRef>;
  /** Priced calls per token waiting (up to 7 days) for the token's crowd. */
  awaitingCrowd: Map<string, CallRef[]>;
  crowds: Map<string, CrowdWindow>;
  /** Authors with a pending publication. */
  dirty: Set<string>;
}

export function createAuthorsState(): AuthorsState {
  return {
    hour: null,
    now: 0,
    authors: new Map(),
    handles: new Map(),
    openCalls: new Map(),
    awaitingCrowd: new Map(),
    crowds: new Map(),
    dirty: new Set(),
  };
}

const hourStart = (t: number) => t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS);
const normaliseHandle = (handle: string) => handle.replace(/^@/, '').toLowerCase();

/**
 * Moves event time to `t` (call before applying each event at t). On entering a new hour,
 * publishes every author with resolutions or lead times from before it.
 */
export function advanceTo(state: AuthorsState, t: number, emitter: Emitter): void {
  if (t > state.now) state.now = t;
  const hour = hourStart(t);
  if (state.hour === null) {
    state.hour = hour;
    return;
  }
  if (hour <= state.hour) return;
  state.hour = hour;
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
  const at = Math.max(mention.ts, state.now);
  const author = authorOf(state, mention.authorId, mention.authorHandle);
  const crowd = addToCrowd(state, mention.tokenId, mention.authorId, at);

  const last = author.lastMention.get(mention.tokenId);
  author.lastMention.set(mention.tokenId, last === undefined ? mention.ts : Math.max(last, mention.ts));
  let subject: OutcomeSubject | null = null;
  if (last === undefined || mention.ts - last >= CALL_GAP_MS) {
    subject = registerCall(state, author, mention, at, emitter, tokens, prices);
  }

  // Calls made into an existing crowd (this one included) get a lead time of zero.
  if (crowd.counts.size >= CROWD_AUTHORS) {
    const waiting = state.awaitingCrowd.get(mention.tokenId);
    if (waiting) {
      for (const ref of waiting) {
        const call = state.authors.get(ref.authorId)!.calls[ref.index];
        if (at - call.ts > LEAD_HORIZON_MS) continue;
        call.crowdAt = at;
        markPending(state, ref.authorId, at);
      }
      state.awaitingCrowd.delete(mention.tokenId);
    }
  }
  return subject;
}

/** Applies an outcome resolution from the outcomes module; only 24h outcomes of calls are used. */
export function onOutcome(state: AuthorsState, resolution: OutcomeResolution): void {
  if (resolution.subject.kind !== 'call' || resolution.horizon !== '24h') return;
  const ref = state.openCalls.get(resolution.subject.subjectId);
  if (!ref) return;
  state.openCalls.delete(resolution.subject.subjectId);
  const call = state.authors.get(ref.authorId)!.calls[ref.index];
  call.resolvedAt = resolution.resolvedAt;
  call.forwardReturn = resolution.forwardReturn;
  call.maxDrawdown = resolution.maxDrawdown;
  call.died = resolution.died;
  markPending(state, ref.authorId, resolution.resolvedAt);
}

/** Research score as of the latest published version (features' AuthorQualityLookup). */
export function authorQuality(state: AuthorsState): AuthorQualityLookup {
  return { researchScore: (authorId) => state.authors.get(authorId)?.standing.researchScore ?? null };
}

export function authorDirectory(state: AuthorsState): AuthorDirectory {
  return {
    get: (authorId) => state.authors.get(authorId)?.standing,
    byHandle: (handle) => {
      const id = state.handles.get(normaliseHandle(handle));
      return id === undefined ? undefined : state.authors.get(id)?.standing;
    },
    all: () => [...state.authors.values()].map((a) => a.standing),
  };
}

export function crowdLookup(state: AuthorsState): CrowdLookup {
  return {
    uniqueAuthors1h: (tokenId) => {
      const window = state.crowds.get(tokenId);
      if (!window) return 0;
      evict(window, state.now);
      return window.counts.size;
    },
  };
}

function authorOf(state: AuthorsState, authorId: string, handle: string): AuthorRecord {
  let author = state.authors.get(authorId);
  if (!author) {
    author = {
      authorId,
      handle,
      calls: [],
      lastMention: new Map(),
      version: 0,
      standing: { authorId, handle, researchScore: null, confidence: null, leadTimeSamples: 0, medianLeadTimeMs: null },
      pendingFrom: null,
      lastDataAt: 0,
    };
    state.authors.set(authorId, author);
  }
  if (author.handle !== handle) {
    author.handle = handle;
    author.standing.handle = handle;
  }
  state.handles.set(normaliseHandle(handle), authorId);
  return author;
}

function registerCall(
  state: AuthorsState,
  author: AuthorRecord,
  mention: Mention,
  at: number,
  emitter: Emitter,
  tokens: TokenLookup,
  prices: PriceLookup,
): OutcomeSubject | null {
  const price = prices.lastPrice(mention.tokenId);
  const entryPrice = price !== null && Number.isFinite(price) && price > 0 ? price : null;
  const callId = emitter.id('call', author.authorId, mention.tokenId, mention.ts);
  const narrative = tokens.get(mention.tokenId)?.narrative ?? null;
  const call: CallRecord = {
    callId,
    tokenId: mention.tokenId,
    narrative,
    ts: mention.ts,
    entryPrice,
    resolvedAt: null,
    forwardReturn: null,
    maxDrawdown: null,
    died: false,
    crowdAt: null,
  };
  author.calls.push(call);
  const value: AuthorCall = {
    callId,
    authorId: author.authorId,
    handle: mention.authorHandle,
    tokenId: mention.tokenId,
    narrative,
    postId: mention.postId,
    ts: mention.ts,
    entryPrice,
  };
  emitter.emit({ topic: CALLS_TOPIC, key: author.authorId, value, timestamp: mention.ts });
  if (entryPrice === null) return null;

  const ref: CallRef = { authorId: author.authorId, index: author.calls.length - 1 };
  state.openCalls.set(callId, ref);
  const waiting = state.awaitingCrowd.get(mention.tokenId);
  if (waiting) waiting.push(ref);
  else state.awaitingCrowd.set(mention.tokenId, [ref]);
  // The outcome runs from the current event time, where the entry price was read; the
  // outcomes module also needs its subjects in time order, which post times are not quite.
  return { kind: 'call', subjectId: callId, tokenId: mention.tokenId, ts: at, entryPrice };
}

function addToCrowd(state: AuthorsState, tokenId: string, authorId: string, at: number): CrowdWindow {
  let window = state.crowds.get(tokenId);
  if (!window) {
    window = { authors: [], times: [], head: 0, counts: new Map() };
    state.crowds.set(tokenId, window);
  }
  window.authors.push(authorId);
  window.times.push(at);
  window.counts.set(authorId, (window.counts.get(authorId) ?? 0) + 1);
  evict(window, at);
  return window;
}

/** Drops mentions at or before `now` − 1h; the trailing hour is (now − 1h, now]. */
function evict(window: CrowdWindow, now: number): void {
  const cutoff = now - HOUR_MS;
  while (window.head < window.times.length && window.times[window.head] <= cutoff) {
    const authorId = window.authors[window.head];
    const left = window.counts.get(authorId)! - 1;
    if (left === 0) window.counts.delete(authorId);
    else window.counts.set(authorId, left);
    window.head++;
  }
  if (window.head > 256 && window.head * 2 > window.times.length) {
    window.authors = window.authors.slice(window.head);
    window.times = window.times.slice(window.head);
    window.head = 0;
  }
}

function markPending(state: AuthorsState, authorId: string, at: number): void {
  const author = state.authors.get(authorId)!;
  author.pendingFrom = author.pendingFrom === null ? at : Math.min(author.pendingFrom, at);
  author.lastDataAt = Math.max(author.lastDataAt, at);
  state.dirty.add(authorId);
}

/** Publishes, as of `asOf`, every author with unpublished data from before it. */
function publish(state: AuthorsState, asOf: number, emitter: Emitter): void {
  for (const authorId of state.dirty) {
    const author = state.authors.get(authorId)!;
    if (author.pendingFrom === null || author.pendingFrom >= asOf) continue;
    const m = computeMetrics(author.calls, asOf);
    author.version++;
    const value: AuthorMetrics = {
      authorId,
      handle: author.handle,
      ts: asOf,
      version: author.version,
      modelVersion: AUTHOR_METRICS_MODEL,
      ...m,
    };
    emitter.emit({ topic: AUTHOR_METRICS_TOPIC, key: authorId, value, timestamp: asOf });
    author.standing = {
      authorId,
      handle: author.handle,
      researchScore: m.researchScore,
      confidence: m.confidence,
      leadTimeSamples: m.leadTimeSamples,
      medianLeadTimeMs: m.medianLeadTimeMs,
    };
    // Data from at or after asOf (delivered ahead of this hour's start) waits for the next hour.
    if (author.lastDataAt >= asOf) author.pendingFrom = asOf;
    else {
      author.pendingFrom = null;
      state.dirty.delete(authorId);
    }
  }
}

/** Hourly housekeeping: forget crowd waits past the lead horizon and idle crowd windows. */
function sweep(state: AuthorsState, t: number): void {
  for (const [tokenId, waiting] of state.awaitingCrowd) {
    const alive = waiting.filter((ref) => t - state.authors.get(ref.authorId)!.calls[ref.index].ts <= LEAD_HORIZON_MS);
    if (alive.length === 0) state.awaitingCrowd.delete(tokenId);
    else if (alive.length < waiting.length) state.awaitingCrowd.set(tokenId, alive);
  }
  for (const [tokenId, window] of state.crowds) {
    evict(window, t);
    if (window.counts.size === 0) state.crowds.delete(tokenId);
  }
}
