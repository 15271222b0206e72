import { z } from 'zod';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { column, columns, int64, list, sql, table, type Sql } from '../../infra/store/sql-literal.ts';
import { COHORT_KINDS, CohortMemberSchema, type CohortKind, type CohortMember } from '../../schemas/records/quant-social.ts';
import { mentions, type ProjectionTables } from '../tables.ts';
import { cohortEvents, cohorts, type CohortEventRow, type CohortRow } from '../tables/social.ts';

const Members = z.array(CohortMemberSchema);
const EventMembers = z.array(z.string());
const Kind = z.enum(COHORT_KINDS);

/** Who asks: cohorts are visible by API key and team. */
export interface CohortViewer {
  viewerKeyId: string;
  viewerTeamId?: string | null;
}

export interface ListCohortsQuery extends CohortViewer {
  kind: CohortKind | 'all';
}

export interface CohortSummary {
  cohortId: string;
  kind: CohortKind;
  name: string;
  ownerKeyId: string | null;
  teamId: string | null;
  rule: string;
  version: number;
  ts: number;
  members: CohortMember[];
}

export interface ConvergenceEventView {
  eventId: string;
  tokenId: string;
  ts: number;
  cohortVersion: number;
  memberCount: number;
  cohortSize: number;
  windowMinutes: number;
  members: string[];
  score: number;
}

export interface CohortDetail extends CohortSummary {
  /** Newest first. */
  convergenceEvents: ConvergenceEventView[];
}

/** What a set of authors (a cohort's members) posted about tokens in a time window. */
export interface CollectiveActivity {
  /** Epoch ms, exclusive. */
  from: number;
  /** Epoch ms, inclusive. */
  to: number;
  /** Token mentions by the authors (one per post and token). */
  mentions: number;
  /** Authors with at least one mention. */
  activeAuthors: number;
  /** Distinct tokens mentioned. */
  tokenCount: number;
  /** The most mentioned tokens, most mentions first, then token id. */
  topTokens: { tokenId: string; mentions: number; authors: number }[];
}

/** How many tokens collectiveActivity names by default. */
const TOP_ACTIVITY_TOKENS = 10;

/** How many convergence events getCohort returns by default. */
const RECENT_EVENTS = 50;

/**
 * Cohorts the viewer may see: every auto cohort, plus manual ones the viewer's key owns or
 * that are shared with the viewer's team. Deleted cohorts are never visible.
 */
export async function listCohorts(store: AnalyticalStore<ProjectionTables>, query: ListCohortsQuery): Promise<CohortSummary[]> {
  const kind = query.kind === 'all' ? sql`` : sql`AND ${column(cohorts, 'kind')} = ${query.kind}`;
  const rows = await store.query<CohortRow>(
    sql`SELECT ${columns(cohorts)} FROM ${table(cohorts)}
        WHERE ${visible(query)} ${kind}
        ORDER BY ${column(cohorts, 'kind')}, ${column(cohorts, 'name')}, ${column(cohorts, 'cohort_id')}`,
  );
  return rows.map(toSummary);
}

/** One cohort with its recent convergence events; null when it does not exist or the viewer may not see it. */
export async function getCohort(
  store: AnalyticalStore<ProjectionTables>,
  cohortId: string,
  viewer: CohortViewer,
  eventLimit: number = RECENT_EVENTS,
): Promise<CohortDetail | null> {
  const rows = await store.query<CohortRow>(
    sql`SELECT ${columns(cohorts)} FROM ${table(cohorts)}
        WHERE ${column(cohorts, 'cohort_id')} = ${cohortId} AND ${visible(viewer)}`,
  );
  const row = rows[0];
  if (row === undefined) return null;
  const events = await store.query<CohortEventRow>(
    sql`SELECT ${columns(cohortEvents)} FROM ${table(cohortEvents)}
        WHERE ${column(cohortEvents, 'cohort_id')} = ${cohortId}
        ORDER BY ${column(cohortEvents, 'ts')} DESC, ${column(cohortEvents, 'event_id')} LIMIT ${int64(eventLimit)}`,
  );
  return { ...toSummary(row), convergenceEvents: events.map(toEvent) };
}

function visible(viewer: CohortViewer): Sql {
  const team = viewer.viewerTeamId ?? null;
  // A null team must match nothing: comparing with NULL is never true in either store.
  const shared = team === null ? sql`` : sql`OR ${column(cohorts, 'team_id')} = ${team}`;
  return sql`${column(cohorts, 'deleted')} = ${false}
    AND (${column(cohorts, 'kind')} = 'auto' OR ${column(cohorts, 'owner_key_id')} = ${viewer.viewerKeyId} ${shared})`;
}

function toSummary(row: CohortRow): CohortSummary {
  return {
    cohortId: row.cohort_id,
    kind: Kind.parse(row.kind),
    name: row.name,
    ownerKeyId: row.owner_key_id,
    teamId: row.team_id,
    rule: row.rule,
    version: row.version,
    ts: row.ts,
    members: Members.parse(JSON.parse(row.members)),
  };
}

function toEvent(row: CohortEventRow): ConvergenceEventView {
  return {
    eventId: row.event_id,
    tokenId: row.token_id,
    ts: row.ts,
    cohortVersion: row.cohort_version,
    memberCount: row.member_count,
    cohortSize: row.cohort_size,
    windowMinutes: row.window_minutes,
    members: EventMembers.parse(JSON.parse(row.members)),
    score: row.score,
  };
}

/**
 * The mentions by `authorIds` in (from, to]: totals and the most mentioned tokens. The
 * collective activity of a cohort is this over its members with a known author id.
 */
export async function collectiveActivity(
  store: AnalyticalStore<ProjectionTables>,
  authorIds: readonly string[],
  from: number,
  to: number,
  topTokens: number = TOP_ACTIVITY_TOKENS,
): Promise<CollectiveActivity> {
  const ids = [...new Set(authorIds)];
  if (ids.length === 0) return { from, to, mentions: 0, activeAuthors: 0, tokenCount: 0, topTokens: [] };
  const author = column(mentions, 'author_id');
  const token = column(mentions, 'token_id');
  const where = sql`${author} IN ${list(ids)} AND ${column(mentions, 'ts')} > ${int64(from)} AND ${column(mentions, 'ts')} <= ${int64(to)}`;
  const [totals] = await store.query<{ mentions: number; authors: number; tokens: number }>(
    sql`SELECT count(*) AS mentions, count(DISTINCT ${author}) AS authors, count(DISTINCT ${token}) AS tokens
        FROM ${table(mentions)} WHERE ${where}`,
  );
  const top = await store.query<{ token_id: string; mentions: number; authors: number }>(
    sql`SELECT ${token} AS token_id, count(*) AS mentions, count(DISTINCT ${author}) AS authors
        FROM ${table(mentions)} WHERE ${where}
        GROUP BY ${token} ORDER BY mentions DESC, token_id LIMIT ${int64(topTokens)}`,
  );
  return {
    from,
    to,
    mentions: totals?.mentions ?? 0,
    activeAuthors: totals?.authors ?? 0,
    tokenCount: totals?.tokens ?? 0,
    topTokens: top.map((r) => ({ tokenId: r.token_id, mentions: r.mentions, authors: r.authors })),
  };
}
