import { TOPICS } from '../../../schemas/catalogue.ts';
import type { QuantActivity, QuantFreshness, QuantMarket, QuantSnapshot } from '../../../schemas/records/quant-scores.ts';
import type { FeatureSnapshot } from '../../../schemas/records/quant-market.ts';
import type { ActiveSignal, AnalogSummary, Emitter, ScoredSnapshot } from '../contracts.ts';
import type { FeatureName } from '../features/definitions.ts';
import { MODEL_VERSIONS } from '../scores/models.ts';

/**
 * The quant snapshot record of a token (spec 2.3), assembled from its scored feature
 * snapshot, the signals active at its time and (on request) its analog summary, with a
 * freshness block computed at the snapshot's own time, never the wall clock.
 */

/** Every snapshot, keyed by token id: the replayable history. */
export const SNAPSHOTS_TOPIC = TOPICS.snapshots.name;
/** The same records on a compacted topic: the latest snapshot per token id. */
export const SNAPSHOTS_LATEST_TOPIC = TOPICS.snapshotsLatest.name;

/** Social activity older than this at snapshot time makes the snapshot stale. */
export const SOCIAL_STALE_MS = 2 * 3_600_000;
/** Market data older than this at snapshot time makes the snapshot stale. */
export const MARKET_STALE_MS = 30 * 60_000;

export function buildQuantSnapshot(
  scored: ScoredSnapshot,
  feature: FeatureSnapshot,
  active: readonly ActiveSignal[],
  analogs: AnalogSummary | null,
): QuantSnapshot {
  if (scored.snapshotId !== feature.snapshotId) throw new Error(`scores of ${scored.snapshotId} given with features of ${feature.snapshotId}`);
  // Plain reads, not a local arrow: tsx names a named arrow each time one is created.
  const v: Partial<Record<FeatureName, number | null>> = feature.features;
  const market: QuantMarket = {
    priceUsd: feature.priceUsd,
    priceChange15m: v.price_change_15m ?? null,
    priceChange1h: v.price_change_1h ?? null,
    priceChange24h: v.price_change_24h ?? null,
    volume1h: v.volume_1h ?? null,
    volume24h: v.volume_24h ?? null,
    volumeAcceleration: v.volume_acceleration ?? null,
    liquidityUsd: v.liquidity_usd ?? null,
    marketCapUsd: v.market_cap_usd ?? null,
    trades1h: v.trades_1h ?? null,
  };
  const activity: QuantActivity = {
    mentions1h: v.mentions_1h ?? null,
    mentions24h: v.mentions_24h ?? null,
    uniqueAuthors1h: v.unique_authors_1h ?? null,
    uniqueAuthors24h: v.unique_authors_24h ?? null,
    mentionVelocity15m: v.mention_velocity_15m ?? null,
    mentionVelocity1h: v.mention_velocity_1h ?? null,
    newAuthorShare1h: v.new_author_share_1h ?? null,
    qualityWeightedAttention1h: v.quality_weighted_attention_1h ?? null,
    engagement1h: v.engagement_1h ?? null,
    engagement24h: v.engagement_24h ?? null,
  };
  return {
    snapshotId: scored.snapshotId,
    tokenId: scored.tokenId,
    ts: scored.ts,
    symbol: feature.symbol,
    chain: feature.chain,
    narrative: feature.narrative,
    // Shared, not copied (a snapshot is built 100k times a simulated day): the scored and
    // feature snapshots are never changed once built.
    scores: scored.scores,
    scoreDetails: scored.details,
    activeSignals: active.map((s) => ({ signalId: s.signalId, type: s.type, ruleVersion: s.ruleVersion, firedAt: s.firedAt, strength: s.strength })),
    market,
    activity,
    divergenceState: scored.divergenceState,
    features: feature.features,
    analogs: analogs === null ? null : { ...analogs },
    // The snapshot's own feature version, in case it was built by an older one.
    modelVersions: { ...MODEL_VERSIONS, features: feature.featureVersion },
    freshness: freshness(scored.ts, feature.sourceLastEventAt, feature.marketLastAt),
  };
}

/** Freshness as of `at` (the snapshot time): lags, and why it is stale. */
export function freshness(at: number, sourceLastEventAt: number | null, marketLastAt: number | null): QuantFreshness {
  const sourceLagMs = sourceLastEventAt === null ? null : at - sourceLastEventAt;
  const marketLagMs = marketLastAt === null ? null : at - marketLastAt;
  const staleReasons: string[] = [];
  if (sourceLagMs === null) staleReasons.push('no social activity yet');
  else if (sourceLagMs > SOCIAL_STALE_MS) staleReasons.push(`social activity delayed by ${formatAge(sourceLagMs)}`);
  if (marketLagMs === null) staleReasons.push('no market data yet');
  else if (marketLagMs > MARKET_STALE_MS) staleReasons.push(`market data delayed by ${formatAge(marketLagMs)}`);
  return { updatedAt: at, sourceLastEventAt, marketLastAt, sourceLagMs, marketLagMs, stale: staleReasons.length > 0, staleReasons };
}

/** "14 min", "2 h 14 min", "3 d 2 h": whole minutes, the two largest units. */
export function formatAge(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${minutes % 60} min`;
  return `${minutes} min`;
}

/** Builds the snapshot and emits it to the history and the latest-per-token topics, at its time. */
export function emitSnapshot(
  scored: ScoredSnapshot,
  feature: FeatureSnapshot,
  active: readonly ActiveSignal[],
  analogs: AnalogSummary | null,
  emitter: Emitter,
): QuantSnapshot {
  const value = buildQuantSnapshot(scored, feature, active, analogs);
  emitter.emit({ topic: SNAPSHOTS_TOPIC, key: value.tokenId, value, timestamp: value.ts });
  emitter.emit({ topic: SNAPSHOTS_LATEST_TOPIC, key: value.tokenId, value, timestamp: value.ts });
  return value;
}
