import type { QuantActivity, QuantMarket } from '../../schemas/records/quant-scores.ts';

/** The market block of a quant snapshot with nothing known; tests spread it and set what they need. */
export const UNKNOWN_MARKET: Readonly<QuantMarket> = Object.freeze({
  priceUsd: null,
  priceChange15m: null,
  priceChange1h: null,
  priceChange24h: null,
  volume1h: null,
  volume24h: null,
  volumeAcceleration: null,
  liquidityUsd: null,
  marketCapUsd: null,
  trades1h: null,
});

/** The activity block of a quant snapshot with nothing known. */
export const UNKNOWN_ACTIVITY: Readonly<QuantActivity> = Object.freeze({
  mentions1h: null,
  mentions24h: null,
  uniqueAuthors1h: null,
  uniqueAuthors24h: null,
  mentionVelocity15m: null,
  mentionVelocity1h: null,
  newAuthorShare1h: null,
  qualityWeightedAttention1h: null,
  engagement1h: null,
  engagement24h: null,
});
