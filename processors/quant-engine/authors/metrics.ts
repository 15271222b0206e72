import { wilsonInterval } from '../../stats/binomial.ts';
import { median, sampleStdev } from '../../stats/describe.ts';
import type { AuthorConfidence, SectorStrength } from '../../../schemas/records/quant-social.ts';

/**
 * The metric definitions of an author's track record (model author-metrics@1), as pure
 * functions of the author's calls and an as-of time. Every figure uses only what was known
 * before the as-of time: 24h outcomes resolved before it and crowds that arrived before it.
 */

export const AUTHOR_METRICS_MODEL = 'author-metrics@1';

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;
/** 1970-01-05, the first Monday after the epoch: weeks run Monday 00:00 UTC to Monday. */
const FIRST_MONDAY_MS = 4 * DAY_MS;

/** A hit: 24h forward return of at least +10% on a token that did not die within the 24h. */
export const HIT_RETURN = 0.1;
/** A false positive: 24h forward return of −20% or worse, or the token died within the 24h. */
export const FALSE_POSITIVE_RETURN = -0.2;
export const MIN_SECTOR_SAMPLES = 8;
export const MIN_SCORE_SAMPLES = 3;
export const MEDIUM_CONFIDENCE_SAMPLES = 10;
export const HIGH_CONFIDENCE_SAMPLES = 30;
const MIN_CONSISTENCY_WEEKS = 3;


/** One call of an author with what became known about it; plain data kept in the authors state. */
export interface CallRecord {
  callId: string;
  tokenId: string;
  narrative: string | null;
  ts: number;
  /** Null: no price at the call's time, so the call is counted but never scored. */
  entryPrice: number | null;
  /** When the 24h outcome became known; null until then. */
  resolvedAt: number | null;
  forwardReturn: number | null;
  maxDrawdown: number | null;
  died: boolean;
  /** First time at or after the call that the token had a crowd, within 7 days; null otherwise. */
  crowdAt: number | null;
}

export interface MetricValues {
  callsTotal: number;
  callsUnpriced: number;
  resolvedCalls: number;
  hits: number;
  hitRate: number | null;
  hitRateLow: number | null;
  hitRateHigh: number | null;
  leadTimeSamples: number;
  medianLeadTimeMs: number | null;
  falsePositiveRate: number | null;
  medianMaxDrawdown24h: number | null;
  medianReturn24h: number | null;
  consistency: number | null;
  activeWeeks: number;
  outcomeVolatility: number | null;
  sectorStrength: SectorStrength[];
  researchScore: number | null;
  confidence: AuthorConfidence;
  confidenceReason: string | null;
}

/** The 24h return a call is judged by: a died token without a final price counts as a total loss. */
export function effectiveReturn(call: CallRecord): number | null {
  return call.forwardReturn ?? (call.died ? -1 : null);
}

export function isHit(call: CallRecord): boolean {
  return !call.died && call.forwardReturn !== null && call.forwardReturn >= HIT_RETURN;
}

export function isFalsePositive(call: CallRecord): boolean {
  return call.died || (call.forwardReturn !== null && call.forwardReturn <= FALSE_POSITIVE_RETURN);
}

/**
 * Research score 0–100 of a resolved sample, one decimal. A blend of three parts, each
 * shrunk towards a sceptical prior worth 10 calls so that a short lucky streak scores
 * modestly: hit rate (prior 20%, weight 0.45), mean 24h return clipped to ±100% (prior 0,
 * through a logistic with scale 10%, weight 0.35) and 1 − false-positive rate (prior 20%,
 * weight 0.2). An author with no record sits near 43.
 */
export function researchScore(calls: readonly CallRecord[]): number {
  const n = calls.length;
  const hits = calls.filter(isHit).length;
  const falsePositives = calls.filter(isFalsePositive).length;
  const returns = calls.map(effectiveReturn).filter((r): r is number => r !== null);
  const hitPart = (hits + 2) / (n + 10);
  const clippedSum = returns.reduce((s, r) => s + Math.max(-1, Math.min(1, r)), 0);
  const returnPart = 1 / (1 + Math.exp(-(clippedSum / (returns.length + 10)) / 0.1));
  const safetyPart = 1 - (falsePositives + 2) / (n + 10);
  return Math.round(1000 * (0.45 * hitPart + 0.35 * returnPart + 0.2 * safetyPart)) / 10;
}

export function confidenceOf(resolved: number): { confidence: AuthorConfidence; reason: string | null } {
  const calls = (k: number) => `${k} resolved call${k === 1 ? '' : 's'}`;
  if (resolved >= HIGH_CONFIDENCE_SAMPLES) return { confidence: 'HIGH', reason: null };
  if (resolved >= MEDIUM_CONFIDENCE_SAMPLES) {
    return { confidence: 'MEDIUM', reason: `${calls(resolved)}; HIGH needs ${HIGH_CONFIDENCE_SAMPLES}` };
  }
  const scoreNote = resolved < MIN_SCORE_SAMPLES ? `; a research score needs ${MIN_SCORE_SAMPLES}` : '';
  return { confidence: 'LOW', reason: `only ${calls(resolved)}; MEDIUM needs ${MEDIUM_CONFIDENCE_SAMPLES}${scoreNote}` };
}

/** Hit rate ≥ the overall rate, compared in integers to avoid rounding ties. */
function atLeast(hits: number, n: number, overallHits: number, overallN: number): boolean {
  return hits * overallN >= overallHits * n;
}

function consistencyOf(resolved: readonly CallRecord[], hits: number): { consistency: number | null; activeWeeks: number } {
  const weeks = new Map<number, { n: number; hits: number }>();
  for (const call of resolved) {
    const week = Math.floor((call.ts - FIRST_MONDAY_MS) / WEEK_MS);
    const w = weeks.get(week) ?? { n: 0, hits: 0 };
    w.n++;
    if (isHit(call)) w.hits++;
    weeks.set(week, w);
  }
  if (weeks.size < MIN_CONSISTENCY_WEEKS) return { consistency: null, activeWeeks: weeks.size };
  let steady = 0;
  for (const w of weeks.values()) if (atLeast(w.hits, w.n, hits, resolved.length)) steady++;
  return { consistency: steady / weeks.size, activeWeeks: weeks.size };
}

function sectorStrengthOf(resolved: readonly CallRecord[], overallHitRate: number): SectorStrength[] {
  const byNarrative = new Map<string, CallRecord[]>();
  for (const call of resolved) {
    if (call.narrative === null) continue;
    const list = byNarrative.get(call.narrative) ?? [];
    list.push(call);
    byNarrative.set(call.narrative, list);
  }
  const sectors: SectorStrength[] = [];
  for (const [narrative, calls] of byNarrative) {
    if (calls.length < MIN_SECTOR_SAMPLES) continue;
    const hitRate = calls.filter(isHit).length / calls.length;
    sectors.push({
      narrative,
      samples: calls.length,
      hitRate,
      medianReturn24h: median(calls.map(effectiveReturn).filter((r): r is number => r !== null)),
      relativeHitRate: hitRate - overallHitRate,
    });
  }
  return sectors.sort(
    (a, b) => b.hitRate - a.hitRate || b.samples - a.samples || (a.narrative < b.narrative ? -1 : a.narrative > b.narrative ? 1 : 0),
  );
}

/** Every metric of an author as of `asOf`, from the author's calls (any order). */
export function computeMetrics(calls: readonly CallRecord[], asOf: number): MetricValues {
  const made = calls.filter((c) => c.ts < asOf);
  const priced = made.filter((c) => c.entryPrice !== null);
  const resolved = priced.filter((c) => c.resolvedAt !== null && c.resolvedAt < asOf);
  const n = resolved.length;
  const hits = resolved.filter(isHit).length;
  const interval = wilsonInterval(hits, n);
  const hitRate = n > 0 ? hits / n : null;
  const returns = resolved.map(effectiveReturn).filter((r): r is number => r !== null);
  const drawdowns = resolved.map((c) => c.maxDrawdown).filter((d): d is number => d !== null);
  const leads = priced.filter((c) => c.crowdAt !== null && c.crowdAt < asOf).map((c) => (c.crowdAt as number) - c.ts);
  const leadMedian = median(leads);
  const { consistency, activeWeeks } = consistencyOf(resolved, hits);
  const { confidence, reason } = confidenceOf(n);
  return {
    callsTotal: made.length,
    callsUnpriced: made.length - priced.length,
    resolvedCalls: n,
    hits,
    hitRate,
    hitRateLow: interval?.low ?? null,
    hitRateHigh: interval?.high ?? null,
    leadTimeSamples: leads.length,
    medianLeadTimeMs: leadMedian === null ? null : Math.round(leadMedian),
    falsePositiveRate: n > 0 ? resolved.filter(isFalsePositive).length / n : null,
    medianMaxDrawdown24h: median(drawdowns),
    medianReturn24h: median(returns),
    consistency,
    activeWeeks,
    outcomeVolatility: sampleStdev(returns),
    sectorStrength: hitRate === null ? [] : sectorStrengthOf(resolved, hitRate),
    researchScore: n >= MIN_SCORE_SAMPLES ? researchScore(resolved) : null,
    confidence,
    confidenceReason: reason,
  };
}
