import type { Chain, Confidence, DivergenceState, Mention, ScoreName } from '../../schemas/records.ts';
import type { OutputRecord } from '../runtime/processor.ts';

/**
 * The in-memory contracts between the modules of the quant engine.
 *
 * The engine is one `single` processor: it reads ingest.tokens, ingest.posts and
 * ingest.market merged in event-time order and passes each event through pure modules
 * (tokens, mentions, market/features, outcomes, authors, cohorts, narratives). Because
 * every module sees events in one order, "as of time t" joins between modules need no
 * versioned lookups at run time: a module's state at t holds only what was known at t.
 * Each module also emits its own derived topics; they are the replayable history the
 * projections and research jobs read.
 */

export const HORIZONS = ['15m', '1h', '6h', '24h', '3d', '7d'] as const;
export type Horizon = (typeof HORIZONS)[number];
export const HORIZON_MS: Record<Horizon, number> = {
  '15m': 15 * 60_000,
  '1h': 3_600_000,
  '6h': 6 * 3_600_000,
  '24h': 24 * 3_600_000,
  '3d': 72 * 3_600_000,
  '7d': 168 * 3_600_000,
};

/** Where modules put records for the log; the engine hands it the runtime's context. */
export interface Emitter {
  emit(output: OutputRecord): void;
  /** Deterministic id `<prefix>_<hash of parts>`. */
  id(prefix: string, ...parts: (string | number)[]): string;
}

/** A token as the registry knows it at the current event time. */
export interface TokenInfo {
  tokenId: string;
  symbol: string;
  name: string;
  chain: Chain;
  address: string;
  narrative: string;
  status: string;
  /** Event time of the token's first metadata record. */
  listedAt: number;
}

/** Read access to the token registry, for modules downstream of it. */
export interface TokenLookup {
  get(tokenId: string): TokenInfo | undefined;
  all(): Iterable<TokenInfo>;
}

/** A tracked entry (a snapshot or an author's call) whose forward outcome resolves later. */
export interface OutcomeSubject {
  /** `snapshot` subjects are snapshots of quant.features; `call` subjects are authors' calls. */
  kind: 'snapshot' | 'call';
  subjectId: string;
  tokenId: string;
  ts: number;
  entryPrice: number;
}

/** The outcome of one subject at one horizon, emitted once the horizon has passed. */
export interface OutcomeResolution {
  subject: OutcomeSubject;
  horizon: Horizon;
  /** Event time at which this became known: subject.ts + horizon. */
  resolvedAt: number;
  /** Price at the horizon over entry price, minus 1; null when no price was seen (see died). */
  forwardReturn: number | null;
  /** Lowest price within the horizon over entry, minus 1 (≤ 0). */
  maxDrawdown: number | null;
  /** Highest price within the horizon over entry, minus 1 (≥ 0). */
  peakReturn: number | null;
  timeToPeakMs: number | null;
  /** The token died (rug, liquidity collapse) inside the horizon. */
  died: boolean;
  /** Last price seen before the horizon ended (the dead-token policies value it). */
  lastPrice: number | null;
}

/** Latest market price of a token as of the current event time, from the market module. */
export interface PriceLookup {
  lastPrice(tokenId: string): number | null;
}

/** What the features module needs to know about authors, as of the current event time. */
export interface AuthorQualityLookup {
  /** Research score 0–100 of the author, or null while too few calls have resolved. */
  researchScore(authorId: string): number | null;
}

/** What the features module needs to know about narratives, as of the current event time. */
export interface NarrativeShareLookup {
  /** Share of all token mentions in the last complete hour that went to this narrative, 0–1; null before any. */
  attentionShare(narrative: string): number | null;
}

export type { Mention };

// ---- Scores, signals and analogs ----------------------------------------------------

export { CONFIDENCE_LEVELS, DIVERGENCE_STATES, SCORE_NAMES } from '../../schemas/records/primitives.ts';
export type { Confidence, DivergenceState, ScoreName } from '../../schemas/records/primitives.ts';
/** 0–100, or null when the data is insufficient (the detail says why). */
export type ScoreValues = Record<ScoreName, number | null>;

export interface ScoreDriver {
  /** A named input, e.g. `unique_authors_1h`. */
  name: string;
  /** Points this driver adds to the score; the contributions of a score sum exactly to it. */
  contribution: number;
}

export interface ScoreDetail {
  score: ScoreName;
  value: number | null;
  drivers: ScoreDriver[];
  confidence: Confidence;
  /** Why confidence is not HIGH, or why the value is null; null otherwise. */
  reason: string | null;
  modelVersion: string;
}

/** A feature snapshot with its scores: what signals and analogs work from. */
export interface ScoredSnapshot {
  snapshotId: string;
  tokenId: string;
  ts: number;
  /** Feature values by rule-field name (features/definitions.ts). */
  features: Record<string, number | null>;
  scores: ScoreValues;
  details: ScoreDetail[];
  divergenceState: DivergenceState;
}

/** Spec 2.5. Fractions, not percentages. */
export interface AnalogSummary {
  n: number;
  median24h: number | null;
  worstDrawdown24h: number | null;
  positiveShare: number | null;
  confidence: Confidence;
}

export interface AnalogNeighbour {
  snapshotId: string;
  tokenId: string;
  ts: number;
  distance: number;
  return24h: number | null;
  maxDrawdown24h: number | null;
}

/** The signals active on a token as of now, for the snapshot and token.score.updated. */
export interface ActiveSignal {
  signalId: string;
  type: string;
  ruleVersion: string;
  firedAt: number;
  strength: number;
}
export interface ActiveSignalsLookup {
  active(tokenId: string): ActiveSignal[];
}
