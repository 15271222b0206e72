import type { RuleField } from '../../projections/tables/quant.ts';
import type { Chain } from '../../schemas/records/primitives.ts';

/**
 * The port research reads point-in-time history through. Every read is by event time: a
 * snapshot is seen with the values it had when it was produced (its own ts), and a price path
 * is read only over rows strictly after an entry. storeHistory (store.ts) implements it over
 * snapshot_history and tokens in either store.
 */

/** The event times of the first and last snapshot in history. */
export interface HistoryBounds {
  first: number;
  last: number;
}

/** A condition on a snapshot field: its value, or its change since the token's previous snapshot. */
export interface FieldCondition {
  field: RuleField;
  op: '>' | '>=' | '<' | '<=';
  value: number;
  measure?: 'value' | 'change';
}

export interface UniverseFilter {
  chains?: readonly Chain[];
  minLiquidityUsd?: number;
}

export interface CandidateQuery {
  /** All must hold on the snapshot's own values (and change since the previous one). */
  conditions: readonly FieldCondition[];
  /** Entry times, inclusive. */
  from: number;
  to: number;
  universe: UniverseFilter;
  /** The fields whose values at entry each candidate carries (the conditions' at least). */
  fields: readonly RuleField[];
}

/** A snapshot on which every condition held, as it was at its own event time. */
export interface Candidate {
  tokenId: string;
  ts: number;
  chain: string;
  /** Null: no price at that time; such a snapshot cannot be an entry. */
  priceUsd: number | null;
  liquidityUsd: number | null;
  /** The requested fields' values at ts; for a change condition, `<field>:change` too. */
  values: Record<string, number | null>;
}

export interface CandidatePage {
  /** Every snapshot up to this event time has been read. */
  until: number;
  candidates: Candidate[];
}

export interface PathEntry {
  tokenId: string;
  ts: number;
  entryPrice: number;
  entryLiquidity: number | null;
}

/** What the history holds about one entry's window (ts, ts + horizon]. */
export interface PricePath {
  tokenId: string;
  ts: number;
  entryPrice: number;
  entryLiquidity: number | null;
  /** Snapshots with a price in the window. */
  ticks: number;
  firstTs: number | null;
  lastTs: number | null;
  /** Price of the last priced snapshot in the window. */
  lastPrice: number | null;
  minPrice: number | null;
  maxPrice: number | null;
  /** Earliest time the window's highest price was seen. */
  peakTs: number | null;
  minLiquidity: number | null;
  /** When the token's metadata marked it dead (rugged, delisted), if that is known; null otherwise. */
  deadSince: number | null;
}

export interface BaselineQuery {
  from: number;
  to: number;
  universe: UniverseFilter;
  /** One token-time per token per slot of this length (the rule's spacing): the first priced snapshot in it. */
  spacingMs: number;
}

export interface HistorySource {
  bounds(): Promise<HistoryBounds | null>;
  /** Candidates in (ts, token id) order, page by page (a page is a span of event time). */
  candidates(query: CandidateQuery, options?: { signal?: AbortSignal }): AsyncIterable<CandidatePage>;
  /** The window (ts, ts + horizonMs] of each entry, in the entries' order. */
  pricePaths(entries: readonly PathEntry[], horizonMs: number): Promise<PricePath[]>;
  /** The windows of eligible token-times sampled per query.spacingMs, in (ts, token id) order. */
  baselinePaths(query: BaselineQuery, horizonMs: number): Promise<PricePath[]>;
  /** Snapshot rows in [from, to] (the work a run scans, for progress). */
  countSnapshots(from: number, to: number): Promise<number>;
}
