/**
 * Trailing event-time windows (b - W, b] over one token's mentions and ticks, kept in time
 * order with the place where each window starts and running aggregates. Moving the windows
 * forward only advances those places, so each event is added once and expired once per
 * window: O(1) amortised. Late events are inserted at their place in time (binary search),
 * and count in a window only if they fall inside it.
 * Plain data only, with no object referenced twice: a token's windows are one value of a
 * table (features.ts), which a store on disk encodes with msgpack. Its ticks, the bulk of a
 * busy token's day, are values of their own, a block per hour (TickBlocks), so a tick
 * rewrites its hour's block and not the day's.
 */
import type { KeyedTable } from '../../runtime/state/tables.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

/** Windows of the social aggregates, shortest first; the last is the longest. */
export const SOCIAL_WINDOWS_MS = [15 * MIN, HOUR, 6 * HOUR, 24 * HOUR] as const;
export const [S15M, S1H, S6H, S24H] = [0, 1, 2, 3] as const;

/** Windows of the market aggregates, shortest first; the last is the longest. */
export const MARKET_WINDOWS_MS = [15 * MIN, HOUR, 24 * HOUR] as const;
export const [M15M, M1H, M24H] = [0, 1, 2] as const;

export interface MentionEntry {
  ts: number;
  authorId: string;
  engagement: number;
  /** True while this is the author's most recent mention of the token: it carries the author in unique counts. */
  latest: boolean;
  /** Time of the author's first mention of the token, ever; kept up to date on the entry carrying the author only. */
  firstSeen: number;
}

export interface SocialWindows {
  /** Mentions sorted by time; those before start[longest] have expired and await compaction. */
  entries: MentionEntry[];
  /** Per window: index of the first entry inside it as of `at`. */
  start: number[];
  mentions: number[];
  authors: number[];
  engagement: number[];
  /**
   * Time of each author's latest mention while it lies inside the longest window, by
   * authorKey(): the entry of that author at that time with `latest` set is the one carrying it.
   */
  latestByAuthor: Record<string, number>;
  /** End of the windows: the time they were last moved to. */
  at: number;
  /** Time of the latest mention. */
  lastTs: number | null;
}

export interface TickEntry {
  ts: number;
  price: number;
  volume: number;
  trades: number;
}

export interface LastTick {
  ts: number;
  price: number;
  liquidity: number;
  marketCap: number;
}

/**
 * Where a token's ticks are kept: one time-sorted block per hour of event time, under
 * `prefix + hour number`, so that a tick rewrites its hour's block only (a day of a busy
 * token's ticks is tens of KB; an hour's, one or two).
 */
export interface TickBlocks {
  table: KeyedTable<TickEntry[]>;
  prefix: string;
}

/** A place in a token's ticks: index `index` of the block of hour `hour`; at its block's end it means the next block's first tick. */
type TickPlace = [hour: number, index: number];

export interface MarketWindows {
  /** Hours holding a block of ticks, ascending, from the one with the last tick at or before the longest window's start. */
  hours: number[];
  /** Per window: the first tick inside it as of `at`; the tick before it gives the price at its start. */
  start: TickPlace[];
  volume: number[];
  trades: number[];
  at: number;
  /** The latest tick (by event time). */
  last: LastTick | null;
}

export function createSocialWindows(): SocialWindows {
  const zeros = () => SOCIAL_WINDOWS_MS.map(() => 0);
  return {
    entries: [],
    start: zeros(),
    mentions: zeros(),
    authors: zeros(),
    engagement: zeros(),
    latestByAuthor: {},
    at: -Infinity,
    lastTs: null,
  };
}

export function createMarketWindows(): MarketWindows {
  const zeros = () => MARKET_WINDOWS_MS.map(() => 0);
  return { hours: [], start: MARKET_WINDOWS_MS.map((): TickPlace => [-Infinity, 0]), volume: zeros(), trades: zeros(), at: -Infinity, last: null };
}

/**
 * Adds a mention; `firstSeen` is the author's first mention of the token, ever, this one
 * included (features.ts keeps it for good): the entry carrying the author holds it, so a
 * snapshot reads it there.
 */
export function addMention(s: SocialWindows, ts: number, authorId: string, engagement: number, firstSeen: number): void {
  if (s.lastTs === null || ts > s.lastTs) s.lastTs = ts;
  const W = SOCIAL_WINDOWS_MS;
  const key = authorKey(authorId);
  const prevTs = s.latestByAuthor[key];
  const prev = prevTs === undefined ? undefined : latestEntry(s.entries, authorId, prevTs);
  // A late mention older than the author's latest (or than every window) may be its first.
  if (prev && prev.ts > ts) prev.firstSeen = firstSeen;
  if (ts <= s.at - W[W.length - 1]) return; // too late for any window
  const entry: MentionEntry = { ts, authorId, engagement, latest: false, firstSeen };
  insertSorted(s.entries, entry);
  for (let w = 0; w < W.length; w++) {
    if (ts > s.at - W[w]) {
      s.mentions[w]++;
      s.engagement[w] += engagement;
    } else {
      s.start[w]++; // inserted before the window's start
    }
  }
  if (prev && prev.ts > ts) return; // a late mention older than the author's latest
  if (prev) {
    prev.latest = false;
    for (let w = 0; w < W.length; w++) if (prev.ts > s.at - W[w]) s.authors[w]--;
  }
  entry.latest = true;
  s.latestByAuthor[key] = ts;
  for (let w = 0; w < W.length; w++) if (ts > s.at - W[w]) s.authors[w]++;
}

/** The author's first mention of the token, as the entry carrying the author holds it; undefined when none does. */
export function carriedFirstSeen(s: SocialWindows, authorId: string): number | undefined {
  const ts = s.latestByAuthor[authorKey(authorId)];
  return ts === undefined ? undefined : latestEntry(s.entries, authorId, ts).firstSeen;
}

/** Moves the windows' end to `now` (never backwards). */
export function advanceSocial(s: SocialWindows, now: number): void {
  if (now <= s.at) return;
  s.at = now;
  const W = SOCIAL_WINDOWS_MS;
  const longest = W.length - 1;
  const entries = s.entries;
  for (let w = 0; w < W.length; w++) {
    const cutoff = now - W[w];
    let i = s.start[w];
    while (i < entries.length && entries[i].ts <= cutoff) {
      const e = entries[i++];
      s.mentions[w]--;
      s.engagement[w] -= e.engagement;
      if (e.latest) {
        s.authors[w]--;
        if (w === longest) delete s.latestByAuthor[authorKey(e.authorId)];
      }
    }
    s.start[w] = i;
  }
  const drop = s.start[longest];
  if (drop > 0 && drop * 2 >= entries.length) {
    s.entries = entries.slice(drop);
    for (let w = 0; w < W.length; w++) s.start[w] -= drop;
  }
}

export function addTick(m: MarketWindows, blocks: TickBlocks, tick: TickEntry & { liquidity: number; marketCap: number }): void {
  if (m.last === null || tick.ts >= m.last.ts) {
    m.last = { ts: tick.ts, price: tick.price, liquidity: tick.liquidity, marketCap: tick.marketCap };
  }
  const hour = Math.floor(tick.ts / HOUR);
  const block = blocks.table.get(blocks.prefix + hour);
  const ticks = block ?? [];
  if (!block) m.hours.splice(sortedIndex(m.hours, hour), 0, hour);
  const at = insertSorted(ticks, { ts: tick.ts, price: tick.price, volume: tick.volume, trades: tick.trades });
  blocks.table.set(blocks.prefix + hour, ticks);
  const W = MARKET_WINDOWS_MS;
  for (let w = 0; w < W.length; w++) {
    if (tick.ts > m.at - W[w]) {
      m.volume[w] += tick.volume;
      m.trades[w] += tick.trades;
      continue;
    }
    // Before the window's start: the start moves past it. Every tick from the start on is
    // later than this one, so the start is in its hour or a later one, or is the end.
    const start = m.start[w];
    if (start[0] === hour) start[1]++;
    else if (start[0] < hour) m.start[w] = [hour, at + 1];
  }
}

export function advanceMarket(m: MarketWindows, blocks: TickBlocks, now: number): void {
  if (now <= m.at) return;
  m.at = now;
  const W = MARKET_WINDOWS_MS;
  for (let w = 0; w < W.length; w++) {
    const cutoff = now - W[w];
    let [hour, i] = m.start[w];
    let ticks = blocks.table.get(blocks.prefix + hour) ?? [];
    for (;;) {
      if (i === ticks.length) {
        const next = m.hours[sortedIndex(m.hours, hour + 1)];
        if (next === undefined) break;
        hour = next;
        i = 0;
        ticks = blocks.table.get(blocks.prefix + hour)!;
      }
      if (ticks[i].ts > cutoff) break;
      m.volume[w] -= ticks[i].volume;
      m.trades[w] -= ticks[i].trades;
      i++;
    }
    m.start[w] = [hour, i];
    // An empty window sums to exactly 0, whatever rounding the subtractions left behind.
    if (i === ticks.length) m.volume[w] = 0;
  }
  // Keep the block of the last tick before the longest window: it is the price at the window's start.
  const [hour, i] = m.start[W.length - 1];
  const keepFrom = i > 0 ? hour : m.hours[sortedIndex(m.hours, hour) - 1];
  while (m.hours.length > 0 && keepFrom !== undefined && m.hours[0] < keepFrom) blocks.table.delete(blocks.prefix + m.hours.shift()!);
}

/** Price of the last tick at or before the start of window `w`, or null when there was none. */
export function priceAtWindowStart(m: MarketWindows, blocks: TickBlocks, w: number): number | null {
  const [hour, i] = m.start[w];
  if (i > 0) return blocks.table.get(blocks.prefix + hour)![i - 1].price;
  const before = m.hours[sortedIndex(m.hours, hour) - 1];
  return before === undefined ? null : blocks.table.get(blocks.prefix + before)!.at(-1)!.price;
}

/**
 * An author's key in latestByAuthor: prefixed, so that no author id is read as a property
 * every object has (`constructor`) or renamed by msgpack (`__proto__`).
 */
function authorKey(authorId: string): string {
  return `a:${authorId}`;
}

/** The author's entry carrying it, at time `ts`: found by binary search, then among the entries of that time. */
function latestEntry(entries: MentionEntry[], authorId: string, ts: number): MentionEntry {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid].ts < ts) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < entries.length && entries[i].ts === ts; i++) {
    if (entries[i].latest && entries[i].authorId === authorId) return entries[i];
  }
  throw new Error(`no latest mention by ${authorId} at ${ts}`);
}

/** Inserts after every item with ts <= item.ts, so equal times keep their arrival order; the index it took. */
function insertSorted<T extends { ts: number }>(items: T[], item: T): number {
  const n = items.length;
  if (n === 0 || items[n - 1].ts <= item.ts) {
    items.push(item);
    return n;
  }
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (items[mid].ts <= item.ts) lo = mid + 1;
    else hi = mid;
  }
  items.splice(lo, 0, item);
  return lo;
}

/** The index of the first of the ascending `values` at or above `value` (their length if none is). */
function sortedIndex(values: number[], value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
