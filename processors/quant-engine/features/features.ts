import { TOPICS } from '../../../schemas/catalogue.ts';
import type { MarketTick, Mention } from '../../../schemas/records.ts';
import type { FeatureSnapshot } from '../../../schemas/records/quant-market.ts';
import type {
  AuthorQualityLookup,
  Emitter,
  NarrativeShareLookup,
  PriceLookup,
  TokenInfo,
  TokenLookup,
} from '../contracts.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';
import { FEATURE_VERSION, UNSCORED_AUTHOR_WEIGHT, type FeatureVector } from './definitions.ts';
import {
  addMention,
  addTick,
  advanceMarket,
  advanceSocial,
  carriedFirstSeen,
  createMarketWindows,
  createSocialWindows,
  M15M,
  M1H,
  M24H,
  priceAtWindowStart,
  S15M,
  S1H,
  S6H,
  S24H,
  type MarketWindows,
  type SocialWindows,
  type TickBlocks,
  type TickEntry,
} from './windows.ts';

/**
 * Per-token features from ticks and mentions, and the point-in-time snapshots of them.
 *
 * Snapshots sit on a 5-minute grid of event time. Before applying every incoming event at t,
 * the engine makes the snapshots of every grid time b < t that is due (nextSnapshotTime,
 * snapshotsAt), so a snapshot at b holds exactly the events with time <= b that had arrived
 * by then. An event with a time at or before a grid time already processed
 * is late: it is applied for the future and counted in late_events_24h, and no emitted
 * snapshot is ever rewritten.
 *
 * The state lives in tables (runtime/state/tables.ts): an event sets its token's value (its
 * windows, bounded by the longest one) and, as time moves, the clock; a tick also its hour's
 * block of the token's ticks, a mention by an author new to the token one more key. A store on disk so writes at a checkpoint only the tokens
 * that changed. Snapshots go in the registry's order of tokens (TokenLookup.all()), never in
 * a table's.
 */

export const FEATURES_TOPIC = TOPICS.features.name;
export const SNAPSHOT_GRID_MS = 5 * 60_000;
/** A token with no new events still gets a snapshot this often. */
export const MAX_SNAPSHOT_GAP_MS = 3_600_000;
const HOUR = 3_600_000;

/** One token's value: bounded by the 24 h windows (mentions of the last day or two; the ticks' blocks apart). */
interface TokenFeatures {
  social: SocialWindows;
  market: MarketWindows;
  /** An event was applied since the last snapshot. */
  changed: boolean;
  lastSnapshotAt: number | null;
  /** Late events by hour of arrival, oldest first: [hour start, count] pairs, at most 24 hours' worth. */
  late: [number, number][];
}

/** Where the grid and event time stand, under CLOCK_KEY. */
interface FeaturesClock {
  /** Next grid time to process; null before the first event. */
  nextBoundary: number | null;
  /** Latest grid time processed: events at or before it are late. */
  processedThrough: number;
  /** Latest event time seen: when a late event arrived. */
  now: number;
  /** Late events so far, all tokens. */
  lateEvents: number;
}

/** Kept in tables (runtime/state/tables.ts). */
export interface FeaturesState {
  /** Token id → its windows and snapshot bookkeeping; a token gets one at its first event or snapshot. */
  tokens: KeyedTable<TokenFeatures>;
  /** `<token id>\u0001<hour number>` → the token's ticks of that hour in time order, from the hour of the last tick before the 24 h window (TickBlocks). */
  ticks: KeyedTable<TickEntry[]>;
  /**
   * firstSeenKey(token, author) → time of the author's first mention of the token, ever: kept
   * for good (new_author_share_1h looks back past every window), so a key per pair rather
   * than inside the token's value. Read at each mention; snapshots read the copy the windows
   * keep on the entry carrying the author.
   */
  firstSeen: KeyedTable<number>;
  clock: KeyedTable<FeaturesClock>;
}

const CLOCK_KEY = 'clock';

export function createFeaturesState(tables: TableSource = IN_MEMORY_TABLES): FeaturesState {
  return {
    tokens: tables.table('features-tokens'),
    ticks: tables.table('features-ticks'),
    firstSeen: tables.table('features-first-seen'),
    clock: tables.table('features-clock'),
  };
}

function tickBlocks(state: FeaturesState, tokenId: string): TickBlocks {
  return { table: state.ticks, prefix: `${tokenId}\u0001` };
}

function clockOf(state: FeaturesState): FeaturesClock {
  return state.clock.get(CLOCK_KEY) ?? { nextBoundary: null, processedThrough: -Infinity, now: -Infinity, lateEvents: 0 };
}

function firstSeenKey(tokenId: string, authorId: string): string {
  return `${tokenId}\u0001${authorId}`;
}

/**
 * The next grid time before event time `t` whose snapshots are still to be made, or null;
 * the grid starts at the first event. The engine makes each with snapshotsAt() after
 * advancing the modules the snapshot joins to that grid time.
 */
export function nextSnapshotTime(state: FeaturesState, t: number): number | null {
  const clock = clockOf(state);
  const nextBoundary = clock.nextBoundary ?? Math.ceil(t / SNAPSHOT_GRID_MS) * SNAPSHOT_GRID_MS;
  // Changed in place and set only when it moves: this runs at least once per event.
  if (t > clock.now || nextBoundary !== clock.nextBoundary) {
    clock.now = Math.max(clock.now, t);
    clock.nextBoundary = nextBoundary;
    state.clock.set(CLOCK_KEY, clock);
  }
  return nextBoundary < t ? nextBoundary : null;
}

/**
 * Emits (to quant.features, keyed by token id) and returns the snapshots of grid time b, the
 * one nextSnapshotTime() gave: b is due for a registered token when one of its events was
 * applied since its last snapshot, or when its last snapshot is an hour old or it has none.
 * Lookups are read as of now, which is as of b: no event after b has been applied yet, and
 * the engine advanced the other modules to b.
 */
export function snapshotsAt(
  state: FeaturesState,
  b: number,
  emitter: Emitter,
  tokens: TokenLookup,
  quality: AuthorQualityLookup,
  narratives: NarrativeShareLookup,
): readonly FeatureSnapshot[] {
  const snapshots: FeatureSnapshot[] = [];
  for (const info of tokens.all()) {
    // A token without a value yet has no snapshot yet either: due, and set below.
    const tf = tokenFeatures(state, info.tokenId);
    if (!tf.changed && tf.lastSnapshotAt !== null && b - tf.lastSnapshotAt < MAX_SNAPSHOT_GAP_MS) continue;
    const snapshot = buildSnapshot(tf, tickBlocks(state, info.tokenId), info, b, emitter, quality, narratives);
    emitter.emit({ topic: FEATURES_TOPIC, key: info.tokenId, value: snapshot, timestamp: b });
    snapshots.push(snapshot);
    tf.changed = false;
    tf.lastSnapshotAt = b;
    state.tokens.set(info.tokenId, tf);
  }
  state.clock.set(CLOCK_KEY, { ...clockOf(state), processedThrough: b, nextBoundary: b + SNAPSHOT_GRID_MS });
  return snapshots;
}

export function featuresOnTick(state: FeaturesState, tick: MarketTick): void {
  const tf = tokenFeatures(state, tick.tokenId);
  noteIfLate(state, tf, tick.ts);
  addTick(tf.market, tickBlocks(state, tick.tokenId), {
    ts: tick.ts,
    price: tick.priceUsd,
    volume: tick.volumeUsd,
    trades: tick.trades,
    liquidity: tick.liquidityUsd,
    marketCap: tick.marketCapUsd,
  });
  tf.changed = true;
  state.tokens.set(tick.tokenId, tf);
}

export function featuresOnMention(state: FeaturesState, mention: Mention): void {
  const tf = tokenFeatures(state, mention.tokenId);
  noteIfLate(state, tf, mention.ts);
  const key = firstSeenKey(mention.tokenId, mention.authorId);
  // An author active on the token in the last day has it in the windows: no read of the big table.
  const known = carriedFirstSeen(tf.social, mention.authorId) ?? state.firstSeen.get(key);
  const firstSeen = known === undefined ? mention.ts : Math.min(known, mention.ts);
  if (firstSeen !== known) state.firstSeen.set(key, firstSeen);
  addMention(tf.social, mention.ts, mention.authorId, mention.engagement, firstSeen);
  tf.changed = true;
  state.tokens.set(mention.tokenId, tf);
}

/** Latest price per token as of the current event time; reads the live state. */
export function featuresPriceLookup(state: FeaturesState): PriceLookup {
  return { lastPrice: (tokenId) => state.tokens.get(tokenId)?.market.last?.price ?? null };
}

/** The token's value, or a new one: the caller changes it and sets it. */
function tokenFeatures(state: FeaturesState, tokenId: string): TokenFeatures {
  return state.tokens.get(tokenId) ?? { social: createSocialWindows(), market: createMarketWindows(), changed: false, lastSnapshotAt: null, late: [] };
}

/** Counts an event at `ts` if it is late, in the clock and in the token's value (which the caller sets). */
function noteIfLate(state: FeaturesState, tf: TokenFeatures, ts: number): void {
  const clock = clockOf(state);
  if (ts > clock.processedThrough) return;
  state.clock.set(CLOCK_KEY, { ...clock, lateEvents: clock.lateEvents + 1 });
  const hour = Math.floor(clock.now / HOUR) * HOUR;
  const last = tf.late.at(-1);
  if (last && last[0] === hour) last[1]++;
  else tf.late.push([hour, 1]);
  while (tf.late.length > 0 && tf.late[0][0] <= hour - 24 * HOUR) tf.late.shift();
}

/** Late events that arrived in the 24 hourly buckets up to the one holding b. */
function lateEvents24h(tf: TokenFeatures, b: number): number {
  const from = Math.floor(b / HOUR) * HOUR - 23 * HOUR;
  let n = 0;
  for (const [hour, count] of tf.late) if (hour >= from) n += count;
  return n;
}

// Module-level rather than a closure in buildSnapshot: a named local arrow is created (and named) per snapshot.
function priceChange(m: MarketWindows, ticks: TickBlocks, price: number | null, w: number): number | null {
  const then = priceAtWindowStart(m, ticks, w);
  return price === null || then === null || then <= 0 ? null : price / then - 1;
}

function buildSnapshot(
  tf: TokenFeatures,
  ticks: TickBlocks,
  info: TokenInfo,
  b: number,
  emitter: Emitter,
  quality: AuthorQualityLookup,
  narratives: NarrativeShareLookup,
): FeatureSnapshot {
  const s = tf.social;
  const m = tf.market;
  advanceSocial(s, b);
  advanceMarket(m, ticks, b);

  // The last hour's distinct authors are the entries still carrying their author.
  let weighted = 0;
  let newAuthors = 0;
  for (let i = s.start[S1H]; i < s.entries.length; i++) {
    const e = s.entries[i];
    if (!e.latest) continue;
    const score = quality.researchScore(e.authorId);
    weighted += score === null ? UNSCORED_AUTHOR_WEIGHT : score / 100;
    if (e.firstSeen > b - HOUR) newAuthors++;
  }

  const last = m.last;
  const price = last?.price ?? null;
  // Running sums can drift a hair below zero after many subtractions.
  const volume1h = last ? Math.max(0, m.volume[M1H]) : null;
  const volume24h = last ? Math.max(0, m.volume[M24H]) : null;

  const features: FeatureVector = {
    mentions_15m: s.mentions[S15M],
    mentions_1h: s.mentions[S1H],
    mentions_6h: s.mentions[S6H],
    mentions_24h: s.mentions[S24H],
    unique_authors_15m: s.authors[S15M],
    unique_authors_1h: s.authors[S1H],
    unique_authors_6h: s.authors[S6H],
    unique_authors_24h: s.authors[S24H],
    mention_velocity_15m: s.mentions[S1H] > 0 ? (s.mentions[S15M] * 4) / s.mentions[S1H] : null,
    mention_velocity_1h: s.mentions[S24H] > 0 ? s.mentions[S1H] / (s.mentions[S24H] / 24) : null,
    new_author_share_1h: s.authors[S1H] > 0 ? newAuthors / s.authors[S1H] : null,
    quality_weighted_attention_1h: weighted,
    engagement_1h: s.engagement[S1H],
    engagement_24h: s.engagement[S24H],
    price_usd: price,
    price_change_15m: priceChange(m, ticks, price, M15M),
    price_change_1h: priceChange(m, ticks, price, M1H),
    price_change_24h: priceChange(m, ticks, price, M24H),
    volume_1h: volume1h,
    volume_24h: volume24h,
    volume_acceleration: volume1h !== null && volume24h ? volume1h / (volume24h / 24) : null,
    liquidity_usd: last?.liquidity ?? null,
    market_cap_usd: last?.marketCap ?? null,
    trades_1h: last ? m.trades[M1H] : null,
    narrative_share: narratives.attentionShare(info.narrative),
    late_events_24h: lateEvents24h(tf, b),
  };
  return {
    snapshotId: emitter.id('snap', info.tokenId, b),
    tokenId: info.tokenId,
    ts: b,
    symbol: info.symbol,
    chain: info.chain,
    narrative: info.narrative,
    featureVersion: FEATURE_VERSION,
    features,
    priceUsd: price,
    marketLastAt: last?.ts ?? null,
    sourceLastEventAt: s.lastTs,
  };
}
