/**
 * Trailing event-time windows (b - W, b] over one token's mentions and ticks, kept as one
 * time-sorted array per token with a start index per window and running aggregates.
 * Moving the windows forward only advances the start indexes, so each event is added once
 * and expired once per window: O(1) amortised. Late events are inserted at their place in
 * time (binary search), and count in a window only if they fall inside it.
 * Plain data only: the state is checkpointed with v8.serialize.
 */

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
}

export interface SocialWindows {
  /** Mentions sorted by time; those before start[longest] have expired and await compaction. */
  entries: MentionEntry[];
  /** Per window: index of the first entry inside it as of `at`. */
  start: number[];
  mentions: number[];
  authors: number[];
  engagement: number[];
  /** Each author's latest mention while it lies inside the longest window. */
  latestByAuthor: Map<string, MentionEntry>;
  /** Time of each author's first mention of the token, ever. */
  firstSeen: Map<string, number>;
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

export interface MarketWindows {
  /** Ticks sorted by time, from the last one at or before the longest window's start. */
  ticks: TickEntry[];
  /** Per window: index of the first tick inside it as of `at`; the tick before it gives the price at its start. */
  start: number[];
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
    latestByAuthor: new Map(),
    firstSeen: new Map(),
    at: -Infinity,
    lastTs: null,
  };
}

export function createMarketWindows(): MarketWindows {
  const zeros = () => MARKET_WINDOWS_MS.map(() => 0);
  return { ticks: [], start: zeros(), volume: zeros(), trades: zeros(), at: -Infinity, last: null };
}

export function addMention(s: SocialWindows, ts: number, authorId: string, engagement: number): void {
  const first = s.firstSeen.get(authorId);
  if (first === undefined || ts < first) s.firstSeen.set(authorId, ts);
  if (s.lastTs === null || ts > s.lastTs) s.lastTs = ts;
  const W = SOCIAL_WINDOWS_MS;
  if (ts <= s.at - W[W.length - 1]) return; // too late for any window
  const entry: MentionEntry = { ts, authorId, engagement, latest: false };
  insertSorted(s.entries, entry);
  for (let w = 0; w < W.length; w++) {
    if (ts > s.at - W[w]) {
      s.mentions[w]++;
      s.engagement[w] += engagement;
    } else {
      s.start[w]++; // inserted before the window's start
    }
  }
  const prev = s.latestByAuthor.get(authorId);
  if (prev && prev.ts > ts) return; // a late mention older than the author's latest
  if (prev) {
    prev.latest = false;
    for (let w = 0; w < W.length; w++) if (prev.ts > s.at - W[w]) s.authors[w]--;
  }
  entry.latest = true;
  s.latestByAuthor.set(authorId, entry);
  for (let w = 0; w < W.length; w++) if (ts > s.at - W[w]) s.authors[w]++;
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
        if (w === longest) s.latestByAuthor.delete(e.authorId);
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

export function addTick(m: MarketWindows, tick: TickEntry & { liquidity: number; marketCap: number }): void {
  if (m.last === null || tick.ts >= m.last.ts) {
    m.last = { ts: tick.ts, price: tick.price, liquidity: tick.liquidity, marketCap: tick.marketCap };
  }
  insertSorted(m.ticks, { ts: tick.ts, price: tick.price, volume: tick.volume, trades: tick.trades });
  const W = MARKET_WINDOWS_MS;
  for (let w = 0; w < W.length; w++) {
    if (tick.ts > m.at - W[w]) {
      m.volume[w] += tick.volume;
      m.trades[w] += tick.trades;
    } else {
      m.start[w]++;
    }
  }
}

export function advanceMarket(m: MarketWindows, now: number): void {
  if (now <= m.at) return;
  m.at = now;
  const W = MARKET_WINDOWS_MS;
  const ticks = m.ticks;
  for (let w = 0; w < W.length; w++) {
    const cutoff = now - W[w];
    let i = m.start[w];
    while (i < ticks.length && ticks[i].ts <= cutoff) {
      m.volume[w] -= ticks[i].volume;
      m.trades[w] -= ticks[i].trades;
      i++;
    }
    m.start[w] = i;
    // An empty window sums to exactly 0, whatever rounding the subtractions left behind.
    if (i === ticks.length) m.volume[w] = 0;
  }
  // Keep the last tick before the longest window: it is the price at the window's start.
  const drop = m.start[W.length - 1] - 1;
  if (drop > 0 && drop * 2 >= ticks.length) {
    m.ticks = ticks.slice(drop);
    for (let w = 0; w < W.length; w++) m.start[w] -= drop;
  }
}

/** Price of the last tick at or before the start of window `w`, or null when there was none. */
export function priceAtWindowStart(m: MarketWindows, w: number): number | null {
  const i = m.start[w] - 1;
  return i >= 0 ? m.ticks[i].price : null;
}

/** Inserts after every item with ts <= item.ts, so equal times keep their arrival order. */
function insertSorted<T extends { ts: number }>(items: T[], item: T): void {
  const n = items.length;
  if (n === 0 || items[n - 1].ts <= item.ts) {
    items.push(item);
    return;
  }
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (items[mid].ts <= item.ts) lo = mid + 1;
    else hi = mid;
  }
  items.splice(lo, 0, item);
}
