import { z } from 'zod';
import { column, columns, sql, table } from '../../infra/store/sql-literal.ts';
import { AUTHOR_CONFIDENCE, SectorStrengthSchema, type AuthorMetrics } from '../../schemas/records/quant-social.ts';
import { authorMetrics as def, type AuthorMetricsRow } from '../tables/social.ts';
import type { ReadStore } from './cursor.ts';

const SectorStrengths = z.array(SectorStrengthSchema);
const Confidence = z.enum(AUTHOR_CONFIDENCE);

/** The handle or author id a request names: without its leading @; null when nothing is left. */
export function authorName(handleOrId: string): string | null {
  const name = handleOrId.startsWith('@') ? handleOrId.slice(1) : handleOrId;
  return name === '' ? null : name;
}

/**
 * Point-in-time author metrics: the latest version at or before `asOf` (epoch ms; the
 * latest of all when omitted), so a past query never sees a later version. `handleOrId`
 * is a handle with or without a leading @ (matched case-insensitively, as handles are) or
 * an author id. Null when no version of that author exists by then. Should the name match
 * versions of several authors at the same time, the lowest author id wins.
 */
export async function authorMetrics(
  store: ReadStore,
  handleOrId: string,
  asOf?: number,
): Promise<AuthorMetrics | null> {
  const name = authorName(handleOrId);
  if (name === null) return null;
  const until = asOf === undefined ? sql`` : sql`AND ${column(def, 'ts')} <= ${asOf}`;
  const rows = await store.query<AuthorMetricsRow>(
    sql`SELECT ${columns(def)} FROM ${table(def)}
        WHERE (lower(${column(def, 'handle')}) = lower(${name}) OR ${column(def, 'author_id')} = ${name}) ${until}
        ORDER BY ${column(def, 'ts')} DESC, ${column(def, 'author_id')} ASC LIMIT 1`,
  );
  const row = rows[0];
  return row === undefined ? null : toMetrics(row);
}

export function toMetrics(row: AuthorMetricsRow): AuthorMetrics {
  return {
    authorId: row.author_id,
    handle: row.handle,
    ts: row.ts,
    version: row.version,
    modelVersion: row.model_version,
    callsTotal: row.calls_total,
    callsUnpriced: row.calls_unpriced,
    resolvedCalls: row.resolved_calls,
    hits: row.hits,
    hitRate: row.hit_rate,
    hitRateLow: row.hit_rate_low,
    hitRateHigh: row.hit_rate_high,
    leadTimeSamples: row.lead_time_samples,
    medianLeadTimeMs: row.median_lead_time_ms,
    falsePositiveRate: row.false_positive_rate,
    medianMaxDrawdown24h: row.median_max_drawdown24h,
    medianReturn24h: row.median_return24h,
    consistency: row.consistency,
    activeWeeks: row.active_weeks,
    outcomeVolatility: row.outcome_volatility,
    sectorStrength: SectorStrengths.parse(JSON.parse(row.sector_strength)),
    researchScore: row.research_score,
    confidence: Confidence.parse(row.confidence),
    confidenceReason: row.confidence_reason,
  };
}
