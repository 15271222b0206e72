import type { NarrativeShareChangeLookup } from '../scores/scores.ts';
import type { NarrativeBucket } from '../../../schemas/records/quant-social.ts';
import type { Emitter, Mention, NarrativeShareLookup, TokenLookup } from '../contracts.ts';
import { TOPICS } from '../../../schemas/catalogue.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';

/**
 * Narratives: per narrative (the mentioned token's narrative) and event-time hour, how
 * much it was talked about and by whom. A bucket closes when event time reaches its end;
 * then every narrative mentioned at least once so far gets a record for it, zeros
 * included, so an hour without posts is a real zero downstream. The record carries the raw
 * counts (theses, mentions, the hour's total, the sorted author ids) so read models can
 * build 6h and 1d buckets and 7d rotation exactly, and the derived hourly values.
 * A mention older than the open bucket is late: counted in `lateMentions`, never applied.
 *
 * Kept in tables: a narrative's track (its open hour and short histories), and per narrative
 * and author, or narrative and post, an entry of their own, so a mention writes a few small
 * keys and the authors ever seen need no set that grows inside one value.
 */

export const NARRATIVES_TOPIC = TOPICS.narratives.name;

const HOUR_MS = 3_600_000;
/** Buckets of history the author-growth baseline averages over. */
const GROWTH_BASELINE_HOURS = 24;
const SHARE_WINDOW_HOURS = 24;
const TOP_N = 5;
const CLOCK_KEY = 'clock';
const SLUGS_KEY = 'slugs';

interface NarrativeTrack {
  /** Mentions in the open bucket. */
  mentions: number;
  /** Distinct posts in the open bucket (a post naming two tokens of the narrative is one thesis). */
  theses: number;
  /** Authors of the open bucket who never mentioned the narrative before. */
  newAuthors: number;
  /** Authors of the open bucket, in the order of their first mention in it (see `authors`). */
  authorIds: string[];
  /** Tokens mentioned in the open bucket, in the order first mentioned, and their mentions. */
  tokenIds: string[];
  tokenMentions: number[];
  /** Unique authors of the last closed buckets, oldest first, since the narrative's first bucket. */
  uniqueHistory: number[];
  /** Mentions of the last closed buckets, aligned with `totalHistory` (zeros before the first mention). */
  mentionHistory: number[];
  /** Mentions in the last closed bucket (0 before the narrative's first), for the share lookup. */
  lastMentions: number;
  /** attentionShareChange24h as of the last closed bucket (null before the first), for the scores. */
  lastShareChange: number | null;
}

/**
 * A narrative's author, from their first mention of it on: being there at all means the
 * author was seen before. The other fields are of the bucket `bucketStart`, the open one
 * while it equals the clock's.
 */
interface NarrativeAuthor {
  bucketStart: number;
  /** Handle of their first mention in that bucket. */
  handle: string;
  /** Posts counted to them in that bucket (a post counts to the author who first mentioned it there). */
  postIds: string[];
}

interface NarrativesClock {
  /** Start of the open bucket; null before the first event. */
  bucketStart: number | null;
  /** All narratives' mentions of the last closed buckets, oldest first, up to 48. */
  totalHistory: number[];
  /** Mentions of the last closed bucket; null before one closed. */
  lastTotal: number | null;
  lateMentions: number;
}

/** Kept in tables (runtime/state/tables.ts); composite keys join their parts with \u0001. */
export interface NarrativesState {
  /** Under CLOCK_KEY: the open bucket, the totals' history, the late mentions. */
  clock: KeyedTable<NarrativesClock>;
  /** Under SLUGS_KEY: every narrative mentioned so far, sorted, the order buckets are published in. */
  slugs: KeyedTable<string[]>;
  /** Narrative → its track. */
  tracks: KeyedTable<NarrativeTrack>;
  /** `${narrative}\u0001${authorId}` → the author in that narrative; one per author ever seen in it. */
  authors: KeyedTable<NarrativeAuthor>;
  /** `${narrative}\u0001${postId}` → true for the posts of the open bucket; deleted as it closes. */
  posts: KeyedTable<true>;
}

export function createNarrativesState(tables: TableSource = IN_MEMORY_TABLES): NarrativesState {
  return {
    clock: tables.table('narratives-clock'),
    slugs: tables.table('narratives-slugs'),
    tracks: tables.table('narratives-tracks'),
    authors: tables.table('narratives-authors'),
    posts: tables.table('narratives-posts'),
  };
}

const hourStart = (t: number) => t - (((t % HOUR_MS) + HOUR_MS) % HOUR_MS);
const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const compositeKey = (narrative: string, id: string) => `${narrative}\u0001${id}`;

function clockOf(state: NarrativesState): NarrativesClock {
  return state.clock.get(CLOCK_KEY) ?? { bucketStart: null, totalHistory: [], lastTotal: null, lateMentions: 0 };
}

/** Mentions counted as late: older than the open bucket, so never applied. */
export function lateMentions(state: NarrativesState): number {
  return clockOf(state).lateMentions;
}

/** Moves event time to `t` (call before applying each event at t); closes every bucket that ended. */
export function advanceTo(state: NarrativesState, t: number, emitter: Emitter, tokens: TokenLookup): void {
  const clock = clockOf(state);
  if (clock.bucketStart === null) {
    state.clock.set(CLOCK_KEY, { ...clock, bucketStart: hourStart(t) });
    return;
  }
  if (t < clock.bucketStart + HOUR_MS) return; // most events: nothing closes, nothing is written
  while (t >= clock.bucketStart + HOUR_MS) {
    closeBucket(state, clock, emitter, tokens);
    clock.bucketStart += HOUR_MS;
  }
  state.clock.set(CLOCK_KEY, clock);
}

export function onMention(state: NarrativesState, mention: Mention, tokens: TokenLookup): void {
  const narrative = tokens.get(mention.tokenId)?.narrative;
  if (narrative === undefined) return;
  const clock = clockOf(state);
  if (clock.bucketStart === null) {
    clock.bucketStart = hourStart(mention.ts);
    state.clock.set(CLOCK_KEY, clock);
  }
  const bucketStart = clock.bucketStart;
  if (mention.ts < bucketStart) {
    clock.lateMentions++;
    state.clock.set(CLOCK_KEY, clock);
    return;
  }
  const track = state.tracks.get(narrative) ?? newTrack(state, narrative, clock);
  track.mentions++;
  const tokenAt = track.tokenIds.indexOf(mention.tokenId);
  if (tokenAt === -1) {
    track.tokenIds.push(mention.tokenId);
    track.tokenMentions.push(1);
  } else {
    track.tokenMentions[tokenAt]++;
  }
  const authorKey = compositeKey(narrative, mention.authorId);
  const seen = state.authors.get(authorKey);
  if (!seen) track.newAuthors++;
  let author = seen;
  if (!author || author.bucketStart !== bucketStart) {
    author = { bucketStart, handle: mention.authorHandle, postIds: [] };
    track.authorIds.push(mention.authorId);
  }
  const postKey = compositeKey(narrative, mention.postId);
  if (!state.posts.has(postKey)) {
    state.posts.set(postKey, true);
    author.postIds.push(mention.postId);
    track.theses++;
  }
  state.authors.set(authorKey, author);
  state.tracks.set(narrative, track);
}

/** The track of a narrative mentioned for the first time, which joins the published ones. */
function newTrack(state: NarrativesState, narrative: string, clock: NarrativesClock): NarrativeTrack {
  const slugs = state.slugs.get(SLUGS_KEY) ?? [];
  const at = slugs.findIndex((s) => byKey(s, narrative) > 0);
  state.slugs.set(SLUGS_KEY, at === -1 ? [...slugs, narrative] : [...slugs.slice(0, at), narrative, ...slugs.slice(at)]);
  return {
    ...emptyBucket(),
    uniqueHistory: [],
    mentionHistory: clock.totalHistory.map(() => 0),
    lastMentions: 0,
    lastShareChange: null,
  };
}

function emptyBucket(): Pick<NarrativeTrack, 'mentions' | 'theses' | 'newAuthors' | 'authorIds' | 'tokenIds' | 'tokenMentions'> {
  return { mentions: 0, theses: 0, newAuthors: 0, authorIds: [], tokenIds: [], tokenMentions: [] };
}

/** Attention share of the last closed hour (features' NarrativeShareLookup). */
export function narrativeShares(state: NarrativesState): NarrativeShareLookup {
  return {
    attentionShare: (narrative) => {
      const { lastTotal } = clockOf(state);
      return lastTotal === null || lastTotal === 0 ? null : (state.tracks.get(narrative)?.lastMentions ?? 0) / lastTotal;
    },
  };
}

/** Change of the 24 h attention share as of the last closed hour (narrative_velocity's input). */
export function narrativeShareChanges(state: NarrativesState): NarrativeShareChangeLookup {
  return { attentionShareChange24h: (narrative) => state.tracks.get(narrative)?.lastShareChange ?? null };
}

/**
 * Publishes the open bucket of every narrative (the clock's) and starts the next; updates the
 * clock's totals, which the caller sets. Costs a read of each author of the hour and a delete
 * of each post of the hour, once.
 */
function closeBucket(state: NarrativesState, clock: NarrativesClock, emitter: Emitter, tokens: TokenLookup): void {
  const start = clock.bucketStart!;
  const end = start + HOUR_MS;
  const slugs = state.slugs.get(SLUGS_KEY) ?? [];
  const tracks = slugs.map((narrative) => state.tracks.get(narrative)!);
  let total = 0;
  for (const track of tracks) total += track.mentions;
  const totals = [...clock.totalHistory, total].slice(-2 * SHARE_WINDOW_HOURS);

  slugs.forEach((narrative, i) => {
    const track = tracks[i];
    const authors = track.authorIds.map((authorId) => ({ authorId, ...state.authors.get(compositeKey(narrative, authorId))! }));
    const mentions = [...track.mentionHistory, track.mentions].slice(-2 * SHARE_WINDOW_HOURS);
    const unique = authors.length;
    const baseline = track.uniqueHistory;
    const share24h = shareOver(mentions, totals, 0);
    const shareBefore = totals.length === 2 * SHARE_WINDOW_HOURS ? shareOver(mentions, totals, SHARE_WINDOW_HOURS) : null;

    const value: NarrativeBucket = {
      narrative,
      bucketStart: start,
      ts: end,
      theses: track.theses,
      mentions: track.mentions,
      totalMentions: total,
      uniqueAuthors: unique,
      newAuthors: track.newAuthors,
      authorIds: [...track.authorIds].sort(byKey),
      authorGrowth: baseline.length === 0 ? null : (unique + 1) / (baseline.reduce((s, u) => s + u, 0) / baseline.length + 1) - 1,
      attentionShare: total === 0 ? null : track.mentions / total,
      attentionShare24h: share24h,
      attentionShareChange24h: share24h === null || shareBefore === null ? null : share24h - shareBefore,
      topTokens: track.tokenIds
        .map((tokenId, k) => ({ tokenId, count: track.tokenMentions[k] }))
        .sort((a, b) => b.count - a.count || byKey(a.tokenId, b.tokenId))
        .slice(0, TOP_N)
        .map(({ tokenId, count }) => ({ tokenId, symbol: tokens.get(tokenId)?.symbol ?? null, mentions: count })),
      topContributors: authors
        .sort((a, b) => b.postIds.length - a.postIds.length || byKey(a.authorId, b.authorId))
        .slice(0, TOP_N)
        .map((a) => ({ authorId: a.authorId, handle: a.handle, posts: a.postIds.length })),
    };
    emitter.emit({ topic: NARRATIVES_TOPIC, key: narrative, value, timestamp: end });

    // The hour's posts go; its authors stay, as seen, without them.
    for (const { authorId, bucketStart, handle, postIds } of authors) {
      for (const postId of postIds) state.posts.delete(compositeKey(narrative, postId));
      state.authors.set(compositeKey(narrative, authorId), { bucketStart, handle, postIds: [] });
    }
    state.tracks.set(narrative, {
      ...emptyBucket(),
      uniqueHistory: [...baseline, unique].slice(-GROWTH_BASELINE_HOURS),
      mentionHistory: mentions,
      lastMentions: track.mentions,
      lastShareChange: value.attentionShareChange24h,
    });
  });
  clock.totalHistory = totals;
  clock.lastTotal = total;
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
