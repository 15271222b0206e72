import type { NarrativeShareChangeLookup } from '../scores/scores.ts';
import type { NarrativeBucket } from '../../../schemas/records/quant-social.ts';
import type { Emitter, Mention, NarrativeShareLookup, TokenLookup } from '../contracts.ts';
import { TOPICS } from '../../../schemas/catalogue.ts';

/**
 * Narratives: per narrative (the mentioned token's narrative) and event-time hour, how
 * much it was talked about and by whom. A bucket closes when event time reaches its end;
 * then every narrative mentioned at least once so far gets a record for it, zeros
 * included, so an hour without posts is a real zero downstream. The record carries the raw
 * counts (theses, mentions, the hour's total, the sorted author ids) so read models can
 * build 6h and 1d buckets and 7d rotation exactly, and the derived hourly values.
 * A mention older than the open bucket is late: counted in `lateMentions`, never applied.
 */

export const NARRATIVES_TOPIC = TOPICS.narratives.name;

const HOUR_MS = 3_600_000;
/** Buckets of history the author-growth baseline averages over. */
const GROWTH_BASELINE_HOURS = 24;
const SHARE_WINDOW_HOURS = 24;
const TOP_N = 5;

/** What one narrative collects in the open bucket. */
interface Accumulator {
  posts: Set<string>;
  mentions: number;
  /** Author id → handle and posts in the narrative this hour. */
  authors: Map<string, { handle: string; posts: number }>;
  newAuthors: number;
  tokens: Map<string, number>;
}

interface NarrativeTrack {
  acc: Accumulator;
  /** Every author who ever mentioned the narrative. */
  seenAuthors: Set<string>;
  /** Unique authors of the last closed buckets, oldest first, since the narrative's first bucket. */
  uniqueHistory: number[];
  /** Mentions of the last closed buckets, aligned with `totalHistory` (zeros before the first mention). */
  mentionHistory: number[];
}

export interface NarrativesState {
  /** Start of the open bucket; null before the first event. */
  bucketStart: number | null;
  narratives: Map<string, NarrativeTrack>;
  /** All narratives' mentions of the last closed buckets, oldest first, up to 48. */
  totalHistory: number[];
  /** Mentions per narrative in the last closed bucket, for the share lookup. */
  lastMentions: Map<string, number>;
  /** Mentions of the last closed bucket; null before one closed. */
  lastTotal: number | null;
  /** attentionShareChange24h per narrative as of the last closed bucket, for the scores. */
  lastShareChange: Map<string, number | null>;
  lateMentions: number;
}

export function createNarrativesState(): NarrativesState {
  return {
    bucketStart: null,
    narratives: new Map(),
    totalHistory: [],
    lastMentions: new Map(),
    lastTotal: null,
    lastShareChange: new Map(),
    lateMentions: 0,
  };
}

const hourStart = (t: number) => t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS);
const emptyAccumulator = (): Accumulator => ({ posts: new Set(), mentions: 0, authors: new Map(), newAuthors: 0, tokens: new Map() });
const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Moves event time to `t` (call before applying each event at t); closes every bucket that ended. */
export function advanceTo(state: NarrativesState, t: number, emitter: Emitter, tokens: TokenLookup): void {
  if (state.bucketStart === null) {
    state.bucketStart = hourStart(t);
    return;
  }
  while (t >= state.bucketStart + HOUR_MS) {
    closeBucket(state, state.bucketStart, emitter, tokens);
    state.bucketStart += HOUR_MS;
  }
}

export function onMention(state: NarrativesState, mention: Mention, tokens: TokenLookup): void {
  const narrative = tokens.get(mention.tokenId)?.narrative;
  if (narrative === undefined) return;
  if (state.bucketStart === null) state.bucketStart = hourStart(mention.ts);
  if (mention.ts < state.bucketStart) {
    state.lateMentions++;
    return;
  }
  let track = state.narratives.get(narrative);
  if (!track) {
    track = {
      acc: emptyAccumulator(),
      seenAuthors: new Set(),
      uniqueHistory: [],
      mentionHistory: state.totalHistory.map(() => 0),
    };
    state.narratives.set(narrative, track);
  }
  const acc = track.acc;
  acc.mentions++;
  acc.tokens.set(mention.tokenId, (acc.tokens.get(mention.tokenId) ?? 0) + 1);
  let author = acc.authors.get(mention.authorId);
  if (!author) {
    author = { handle: mention.authorHandle, posts: 0 };
    acc.authors.set(mention.authorId, author);
  }
  if (!track.seenAuthors.has(mention.authorId)) {
    track.seenAuthors.add(mention.authorId);
    acc.newAuthors++;
  }
  // A post naming two tokens of the narrative is one thesis.
  if (!acc.posts.has(mention.postId)) {
    acc.posts.add(mention.postId);
    author.posts++;
  }
}

/** Attention share of the last closed hour (features' NarrativeShareLookup). */
export function narrativeShares(state: NarrativesState): NarrativeShareLookup {
  return {
    attentionShare: (narrative) =>
      state.lastTotal === null || state.lastTotal === 0 ? null : (state.lastMentions.get(narrative) ?? 0) / state.lastTotal,
  };
}

/** Change of the 24 h attention share as of the last closed hour (narrative_velocity's input). */
export function narrativeShareChanges(state: NarrativesState): NarrativeShareChangeLookup {
  return { attentionShareChange24h: (narrative) => state.lastShareChange.get(narrative) ?? null };
}

function closeBucket(state: NarrativesState, start: number, emitter: Emitter, tokens: TokenLookup): void {
  const end = start + HOUR_MS;
  let total = 0;
  for (const track of state.narratives.values()) total += track.acc.mentions;
  const totals = [...state.totalHistory, total].slice(-2 * SHARE_WINDOW_HOURS);
  state.lastMentions = new Map();

  for (const narrative of [...state.narratives.keys()].sort(byKey)) {
    const track = state.narratives.get(narrative)!;
    const acc = track.acc;
    const mentions = [...track.mentionHistory, acc.mentions].slice(-2 * SHARE_WINDOW_HOURS);
    const unique = acc.authors.size;
    const baseline = track.uniqueHistory;
    const share24h = shareOver(mentions, totals, 0);
    const shareBefore = totals.length === 2 * SHARE_WINDOW_HOURS ? shareOver(mentions, totals, SHARE_WINDOW_HOURS) : null;

    const value: NarrativeBucket = {
      narrative,
      bucketStart: start,
      ts: end,
      theses: acc.posts.size,
      mentions: acc.mentions,
      totalMentions: total,
      uniqueAuthors: unique,
      newAuthors: acc.newAuthors,
      authorIds: [...acc.authors.keys()].sort(byKey),
      authorGrowth: baseline.length === 0 ? null : (unique + 1) / (baseline.reduce((s, u) => s + u, 0) / baseline.length + 1) - 1,
      attentionShare: total === 0 ? null : acc.mentions / total,
      attentionShare24h: share24h,
      attentionShareChange24h: share24h === null || shareBefore === null ? null : share24h - shareBefore,
      topTokens: [...acc.tokens]
        .sort((a, b) => b[1] - a[1] || byKey(a[0], b[0]))
        .slice(0, TOP_N)
        .map(([tokenId, count]) => ({ tokenId, symbol: tokens.get(tokenId)?.symbol ?? null, mentions: count })),
      topContributors: [...acc.authors]
        .sort((a, b) => b[1].posts - a[1].posts || byKey(a[0], b[0]))
        .slice(0, TOP_N)
        .map(([authorId, a]) => ({ authorId, handle: a.handle, posts: a.posts })),
    };
    emitter.emit({ topic: NARRATIVES_TOPIC, key: narrative, value, timestamp: end });

    state.lastMentions.set(narrative, acc.mentions);
    state.lastShareChange.set(narrative, value.attentionShareChange24h);
    track.mentionHistory = mentions;
    track.uniqueHistory = [...baseline, unique].slice(-GROWTH_BASELINE_HOURS);
    track.acc = emptyAccumulator();
  }
  state.totalHistory = totals;
  state.lastTotal = total;
}

/**
 * Share of mentions over 24 closed buckets: the latest 24 when `skipLatest` is 0, the 24
 * before them when it is 24. Null when those hours had no mentions at all.
 */
function shareOver(mentions: readonly number[], totals: readonly number[], skipLatest: number): number | null {
  const to = totals.length - skipLatest;
  const from = Math.max(0, to - SHARE_WINDOW_HOURS);
  let m = 0;
  let t = 0;
  for (let i = from; i < to; i++) {
    m += mentions[i];
    t += totals[i];
  }
  return t === 0 ? null : m / t;
}
