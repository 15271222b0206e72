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
  const f = (name: FeatureName): number | null => feature.features[name] ?? null;
  const market: QuantMarket = {
    priceUsd: feature.priceUsd,
    priceChange15m: f('price_change_15m'),
    priceChange1h: f('price_change_1h'),
    priceChange24h: f('price_change_24h'),
    volume1h: f('volume_1h'),
    volume24h: f('volume_24h'),
    volumeAcceleration: f('volume_acceleration'),
    liquidityUsd: f('liquidity_usd'),
    marketCapUsd: f('market_cap_usd'),
    trades1h: f('trades_1h'),
  };
  const activity: QuantActivity = {
    mentions1h: f('mentions_1h'),
    mentions24h: f('mentions_24h'),
    uniqueAuthors1h: f('unique_authors_1h'),
    uniqueAuthors24h: f('unique_authors_24h'),
    mentionVelocity15m: f('mention_velocity_15m'),
    mentionVelocity1h: f('mention_velocity_1h'),
    newAuthorShare1h: f('new_author_share_1h'),
    qualityWeightedAttention1h: f('quality_weighted_attention_1h'),
    engagement1h: f('engagement_1h'),
    engagement24h: f('engagement_24h'),
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
