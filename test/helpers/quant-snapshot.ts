import type { TokenRow } from '../../presenters/tokens-table.ts';
import { SCORE_NAMES } from '../../schemas/records/primitives.ts';
import type { QuantActivity, QuantMarket, QuantSnapshot } from '../../schemas/records/quant-scores.ts';

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

/** The metadata of tk_a (AAA, Alpha, on base in memes) as the tokens table holds it, written at `ts`. */
export function alphaToken(ts: number): TokenRow {
  return {
    token_id: 'tk_a',
    ts,
    symbol: 'AAA',
    name: 'Alpha',
    chain: 'base',
    address: `0x${'a'.repeat(40)}`,
    logo_url: null,
    status: 'active',
    narrative: 'memes',
    source_url: null,
  };
}

/** A snapshot of `tokenId` at `ts` with nothing known, on base in memes as AAA; `fields` replace what a test needs. */
export function blankSnapshot(tokenId: string, ts: number, fields: Partial<QuantSnapshot> = {}): QuantSnapshot {
  return {
    snapshotId: `snap_${ts.toString(16)}`,
    tokenId,
    ts,
    symbol: 'AAA',
    chain: 'base',
    narrative: 'memes',
    scores: Object.fromEntries(SCORE_NAMES.map((n) => [n, null])) as QuantSnapshot['scores'],
    scoreDetails: [],
    activeSignals: [],
    market: { ...UNKNOWN_MARKET },
    activity: { ...UNKNOWN_ACTIVITY },
    divergenceState: 'none',
    features: {},
    analogs: null,
    modelVersions: {},
    freshness: { updatedAt: ts, sourceLastEventAt: null, marketLastAt: null, sourceLagMs: null, marketLagMs: null, stale: false, staleReasons: [] },
    ...fields,
  };
}
