import { z } from 'zod';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { byDialect, column, columns, int64, list, sql, table, type Sql, type SqlFragment } from '../../infra/store/sql-literal.ts';
import { COHORT_KINDS, CohortMemberSchema, type CohortKind, type CohortMember } from '../../schemas/records/quant-social.ts';
import type { ConvergenceEventView } from '../../presenters/cohort.ts';
import { mentions, type ProjectionTables } from '../tables.ts';
import { cohortEvents, cohorts, cohortVersions, type CohortEventRow, type CohortRow } from '../tables/social.ts';

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
 * The cohorts table, or as of `asOf` (epoch ms) each cohort's latest version at or before it
 * from cohort_versions: the same columns either way, so the queries below read either.
 */
function cohortsAt(asOf: number | undefined): SqlFragment {
  if (asOf === undefined) return table(cohorts);
  const id = column(cohortVersions, 'cohort_id');
  const version = column(cohortVersions, 'version');
  // Latest row per cohort without window functions in ClickHouse 18.16: LIMIT 1 BY.
  return sql`(SELECT ${columns(cohortVersions)} FROM ${table(cohortVersions)} WHERE ${column(cohortVersions, 'ts')} <= ${int64(asOf)}
    ${byDialect({ duckdb: sql`QUALIFY row_number() OVER (PARTITION BY ${id} ORDER BY ${version} DESC) = 1`, clickhouse: sql`` })}
    ${byDialect({ duckdb: sql``, clickhouse: sql`ORDER BY ${id}, ${version} DESC LIMIT 1 BY ${id}` })}) AS as_of`;
}

/** The newest change of any cohort (epoch ms): the time the live cohort list answers for; null without cohorts. */
export async function latestCohortChange(store: AnalyticalStore<ProjectionTables>): Promise<number | null> {
  const [row] = await store.query<{ n: number; latest: number | null }>(
    sql`SELECT count(*) AS n, max(${column(cohorts, 'ts')}) AS latest FROM ${table(cohorts)}`,
  );
  return row === undefined || row.n === 0 ? null : row.latest;
}

/**
 * Cohorts the viewer may see: every auto cohort, plus manual ones the viewer's key owns or
 * that are shared with the viewer's team. Deleted cohorts are never visible. With `asOf`
 * (epoch ms), the cohorts as they were then: each one's version in effect at that time.
 */
export async function listCohorts(
  store: AnalyticalStore<ProjectionTables>,
  query: ListCohortsQuery,
  asOf?: number,
): Promise<CohortSummary[]> {
  const kind = query.kind === 'all' ? sql`` : sql`AND ${column(cohorts, 'kind')} = ${query.kind}`;
  const rows = await store.query<CohortRow>(
    sql`SELECT ${columns(cohorts)} FROM ${cohortsAt(asOf)}
        WHERE ${visible(query)} ${kind}
        ORDER BY ${column(cohorts, 'kind')}, ${column(cohorts, 'name')}, ${column(cohorts, 'cohort_id')}`,
  );
  return rows.map(toSummary);
}

/**
 * One cohort with its recent convergence events; null when it does not exist or the viewer
 * may not see it. With `asOf` (epoch ms): its version then and the events up to then.
 */
export async function getCohort(
  store: AnalyticalStore<ProjectionTables>,
  cohortId: string,
  viewer: CohortViewer,
  eventLimit: number = RECENT_EVENTS,
  asOf?: number,
): Promise<CohortDetail | null> {
  const rows = await store.query<CohortRow>(
    sql`SELECT ${columns(cohorts)} FROM ${cohortsAt(asOf)}
        WHERE ${column(cohorts, 'cohort_id')} = ${cohortId} AND ${visible(viewer)}`,
  );
  const row = rows[0];
  if (row === undefined) return null;
  const until = asOf === undefined ? sql`` : sql`AND ${column(cohortEvents, 'ts')} <= ${int64(asOf)}`;
  const events = await store.query<CohortEventRow>(
    sql`SELECT ${columns(cohortEvents)} FROM ${table(cohortEvents)}
        WHERE ${column(cohortEvents, 'cohort_id')} = ${cohortId} ${until}
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

/** The newest mention's time (epoch ms): what a cohort's live activity reaches; null without mentions. */
export async function latestMention(store: AnalyticalStore<ProjectionTables>): Promise<number | null> {
  const [row] = await store.query<{ n: number; latest: number | null }>(
    sql`SELECT count(*) AS n, max(${column(mentions, 'ts')}) AS latest FROM ${table(mentions)}`,
  );
  return row === undefined || row.n === 0 ? null : row.latest;
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
