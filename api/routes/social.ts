import type { z } from 'zod';
import {
  collectiveActivity,
  getCohort,
  latestCohortChange,
  latestMention,
  listCohorts,
  type CohortSummary,
} from '../../projections/read-models/cohorts.ts';
import { getNarrative, heatmap, settledBucketClose, narrativeMap, rotation } from '../../projections/read-models/narratives.ts';
import { activeSignalsOn } from '../../projections/read-models/signals.ts';
import { ApiError } from '../errors.ts';
import { defineRoute } from '../http/route.ts';
import { keyOf } from '../middleware/auth.ts';
import { presentConvergence } from '../../presenters/cohort.ts';
import { presentNarrative } from '../../presenters/narrative.ts';
import { presentSignal } from '../../presenters/signal.ts';
import { presentTokenOf } from '../../presenters/token.ts';
import { header, iso } from '../schemas/common.ts';
import {
  AsOfQuerySchema,
  AuthorMetricsSchema,
  COHORT_ACTIVE_SIGNALS_SHOWN,
  COHORT_ACTIVITY_HOURS,
  CohortListQuerySchema,
  CohortListSchema,
  CohortParamsSchema,
  CohortSchema,
  CohortSummarySchema,
  CONVERGENCE_EVENTS_SHOWN,
  HandleParamsSchema,
  HeatmapQuerySchema,
  NarrativeDetailSchema,
  NarrativeHeatmapSchema,
  NarrativeListSchema,
  NarrativeParamsSchema,
  NarrativeRotationSchema,
  RotationQuerySchema,
} from '../schemas/social.ts';
import { MIRROR_REFRESH_MS } from '../services/hourly-mirror.ts';
import { LatestAuthorMetrics } from '../services/latest-author-metrics.ts';
import { PointInTime } from '../services/point-in-time.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

const HOUR_MS = 3_600_000;

function presentCohortSummary(c: CohortSummary): z.input<typeof CohortSummarySchema> {
  return {
    ...header('cohort'),
    id: c.cohortId,
    kind: c.kind,
    name: c.name,
    rule: c.rule,
    ownerKeyId: c.ownerKeyId,
    teamId: c.teamId,
    version: c.version,
    updatedAt: iso(c.ts),
    memberCount: c.members.length,
    members: c.members,
  };
}

/** Authors, cohorts and narratives (spec 2.9, 4.3). */
export function socialRoutes({ store, now, tokens: directory }: RouteDeps): RouteGroup {
  const pointInTime = new PointInTime({ store, now });
  const checkAsOf = (query: { as_of?: number }) => pointInTime.check(query.as_of, 'query.as_of');
  const authors = new LatestAuthorMetrics({ store, now });

  const author = defineRoute({
    method: 'GET',
    path: '/v1/quant/users/:handle',
    operationId: 'getAuthorMetrics',
    tag: 'Authors',
    summary: 'Author metrics',
    description:
      "The author's latest point-in-time metrics, or with `as_of` the version in effect then (404 when the author had none yet). " +
      'The handle is matched case-insensitively, with or without a leading @. The latest metrics are served from memory: ' +
      `a new version shows here at most ${MIRROR_REFRESH_MS / 1000} s after it reaches the store.`,
    params: HandleParamsSchema,
    query: AsOfQuerySchema,
    errors: ['NOT_FOUND'],
    response: { schema: AuthorMetricsSchema, description: "The author's metrics." },
    handler: async ({ params, query }) => {
      const asOf = await checkAsOf(query);
      const m = await authors.find(params.handle, asOf);
      if (m === null) throw new ApiError('NOT_FOUND', asOf === undefined ? `no author ${params.handle}` : `no metrics of ${params.handle} by ${iso(asOf)}`);
      return {
        ...header('author_metrics'),
        authorId: m.authorId,
        handle: m.handle,
        asOf: iso(asOf ?? m.ts),
        versionAt: iso(m.ts),
        modelVersion: m.modelVersion,
        calls: { total: m.callsTotal, unpriced: m.callsUnpriced, resolved: m.resolvedCalls, hits: m.hits },
        // The rate and its interval are null together: both need a resolved call.
        hitRate:
          m.hitRate === null || m.hitRateLow === null || m.hitRateHigh === null
            ? null
            : { value: m.hitRate, low: m.hitRateLow, high: m.hitRateHigh, confidenceLevel: 0.95 as const },
        medianLeadTimeMs: m.medianLeadTimeMs,
        leadTimeSamples: m.leadTimeSamples,
        falsePositiveRate: m.falsePositiveRate,
        medianMaxDrawdown24h: m.medianMaxDrawdown24h,
        medianReturn24h: m.medianReturn24h,
        consistency: m.consistency,
        activeWeeks: m.activeWeeks,
        outcomeVolatility: m.outcomeVolatility,
        sectorStrength: m.sectorStrength,
        researchScore: m.researchScore,
        confidence: m.confidence,
        confidenceReason: m.confidenceReason,
      };
    },
  });

  const cohorts = defineRoute({
    method: 'GET',
    path: '/v1/quant/cohorts',
    operationId: 'listCohorts',
    tag: 'Cohorts',
    summary: 'Cohorts visible to the key',
    description:
      'Every auto cohort, plus the manual cohorts owned by the calling key or shared with its team (`tqa cohorts share`). One page holds every cohort: auto first, then manual, each by name. With `as_of`, the cohorts as they were then: ' +
      "each one's membership version in effect at that time (cohorts deleted by then left out); without it, `as_of` is the newest change of any cohort.",
    query: CohortListQuerySchema,
    response: { schema: CohortListSchema, description: 'The cohorts.' },
    handler: async ({ query, ctx }) => {
      const asked = await checkAsOf(query);
      const viewer = { kind: query.kind, viewerKeyId: keyOf(ctx).id, viewerTeamId: keyOf(ctx).team?.id ?? null };
      const [rows, asOf] = await Promise.all([listCohorts(store, viewer, asked), asked ?? latestCohortChange(store)]);
      return {
        ...header('list'),
        data: rows.map(presentCohortSummary),
        hasMore: false,
        nextCursor: null,
        total: rows.length,
        asOf: iso(asOf ?? null),
      };
    },
  });

  const cohort = defineRoute({
    method: 'GET',
    path: '/v1/quant/cohorts/:id',
    operationId: 'getCohort',
    tag: 'Cohorts',
    summary: 'One cohort',
    description:
      `Members, collective activity (members' mentions in the ${COHORT_ACTIVITY_HOURS} hours up to \`as_of\`), the tokens of its latest ` +
      `${CONVERGENCE_EVENTS_SHOWN} convergence events, the signals active at \`as_of\` on those tokens, and those events, all as of one time: ` +
      "`as_of` when given (the membership version in effect then, 404 before the cohort existed), else the newest mention stored or the cohort's " +
      'latest change, whichever is later. A cohort the key may not see (a manual cohort of another key) answers 404, as an unknown one does.',
    params: CohortParamsSchema,
    query: AsOfQuerySchema,
    errors: ['NOT_FOUND'],
    response: { schema: CohortSchema, description: 'The cohort.' },
    handler: async ({ params, query, ctx }) => {
      const viewer = { viewerKeyId: keyOf(ctx).id, viewerTeamId: keyOf(ctx).team?.id ?? null };
      const asked = await checkAsOf(query);
      // Live: the cohort as it stands, only to know its latest change (no events needed).
      const current = asked === undefined ? await getCohort(store, params.id, viewer, 0) : null;
      const to = asked ?? Math.max((await latestMention(store)) ?? 0, current?.ts ?? 0);
      // The live answer is the answer as of the newest data it reads, so asking again later with its as_of gives it back.
      const c = asked === undefined && current === null ? null : await getCohort(store, params.id, viewer, CONVERGENCE_EVENTS_SHOWN, to);
      if (c === null) throw new ApiError('NOT_FOUND', asked === undefined ? `no cohort ${params.id}` : `no cohort ${params.id} at ${iso(asked)}`);
      // Events are newest first, so the first event of a token is its latest convergence.
      const byToken = new Map<string, { events: number; last: number }>();
      for (const e of c.convergenceEvents) {
        const seen = byToken.get(e.tokenId);
        if (seen) seen.events++;
        else byToken.set(e.tokenId, { events: 1, last: e.ts });
      }
      const memberIds = c.members.flatMap((m) => (m.authorId === null ? [] : [m.authorId]));
      const [activity, signals] = await Promise.all([
        collectiveActivity(store, memberIds, to - COHORT_ACTIVITY_HOURS * HOUR_MS, to),
        activeSignalsOn(store, [...byToken.keys()], COHORT_ACTIVE_SIGNALS_SHOWN, to),
      ]);
      const tokens = await directory.rows([...byToken.keys(), ...activity.topTokens.map((t) => t.tokenId)]);
      return {
        ...presentCohortSummary(c),
        collectiveActivity: {
          from: iso(activity.from),
          to: iso(activity.to),
          mentions: activity.mentions,
          activeMembers: activity.activeAuthors,
          tokenCount: activity.tokenCount,
          topTokens: activity.topTokens.map((t) => ({ token: presentTokenOf(tokens, t.tokenId), mentions: t.mentions, members: t.authors })),
        },
        tokens: [...byToken].map(([id, t]) => ({ token: presentTokenOf(tokens, id), convergenceEvents: t.events, lastConvergedAt: iso(t.last) })),
        activeSignals: signals.map((s) => presentSignal(s, tokens)),
        convergenceEvents: c.convergenceEvents.map((e) => presentConvergence(e, tokens)),
        asOf: iso(to),
      };
    },
  });

  const narratives = defineRoute({
    method: 'GET',
    path: '/v1/quant/narratives',
    operationId: 'listNarratives',
    tag: 'Narratives',
    summary: 'Narrative map',
    description:
      'Every narrative as of its latest closed hour, by slug, in one page; with `as_of`, its latest hour closed by then. ' +
      'Without it, `as_of` is the newest hour close up to which every narrative\'s bucket is stored.',
    query: AsOfQuerySchema,
    response: { schema: NarrativeListSchema, description: 'The narratives.' },
    handler: async ({ query }) => {
      const asOf = (await checkAsOf(query)) ?? (await settledBucketClose(store));
      const rows = await narrativeMap(store, asOf ?? undefined);
      return { ...header('list'), data: rows.map(presentNarrative), hasMore: false, nextCursor: null, total: rows.length, asOf: iso(asOf ?? null) };
    },
  });

  const rotationRoute = defineRoute({
    method: 'GET',
    path: '/v1/quant/narratives/rotation',
    operationId: 'getNarrativeRotation',
    tag: 'Narratives',
    summary: 'Narrative rotation',
    description:
      'Attention-share change per narrative: its share of all token mentions over the window ending with the latest closed hour, ' +
      'against the window of equal length before. With `as_of`, over the hours closed by then.',
    query: RotationQuerySchema,
    response: { schema: NarrativeRotationSchema, description: 'Share changes.' },
    handler: async ({ query }) => {
      const asOf = (await checkAsOf(query)) ?? (await settledBucketClose(store));
      const r = await rotation(store, query.window, asOf ?? undefined);
      return {
        ...header('narrative_rotation'),
        window: r.window,
        from: iso(r.from),
        to: iso(r.to),
        narratives: r.narratives.map((n) => ({ slug: n.narrative, share: n.share, previousShare: n.previousShare, change: n.change })),
        asOf: iso(asOf ?? null),
      };
    },
  });

  const heatmapRoute = defineRoute({
    method: 'GET',
    path: '/v1/quant/narratives/heatmap',
    operationId: 'getNarrativeHeatmap',
    tag: 'Narratives',
    summary: 'Narrative heatmap',
    description:
      'Narratives by time: one row per narrative with data in the range (by slug), one column per bucket; raw values and per-row intensity. ' +
      'The columns end with the latest closed hour of data (closed by `as_of` when given).',
    query: HeatmapQuerySchema,
    response: { schema: NarrativeHeatmapSchema, description: 'The matrix.' },
    handler: async ({ query }) => {
      const asOf = (await checkAsOf(query)) ?? (await settledBucketClose(store));
      const { as_of: _, ...shape } = query;
      const h = await heatmap(store, shape, asOf ?? undefined);
      return {
        ...header('narrative_heatmap'),
        metric: h.metric,
        bucket: h.bucket,
        range: h.range,
        columns: h.bucketStarts.map((t) => iso(t)),
        rows: h.rows.map((r) => ({ slug: r.narrative, values: r.values, intensity: r.intensity })),
        asOf: iso(asOf ?? null),
      };
    },
  });

  const narrative = defineRoute({
    method: 'GET',
    path: '/v1/quant/narratives/:slug',
    operationId: 'getNarrative',
    tag: 'Narratives',
    summary: 'One narrative',
    description: 'The narrative as of its latest closed hour; with `as_of`, its latest hour closed by then (404 when it had none yet).',
    params: NarrativeParamsSchema,
    query: AsOfQuerySchema,
    errors: ['NOT_FOUND'],
    response: { schema: NarrativeDetailSchema, description: 'The narrative as of its latest closed hour.' },
    handler: async ({ params, query }) => {
      const asOf = (await checkAsOf(query)) ?? (await settledBucketClose(store));
      const n = asOf === null ? null : await getNarrative(store, params.slug, asOf);
      if (n === null || asOf === null) throw new ApiError('NOT_FOUND', `no narrative ${params.slug}`);
      return { ...presentNarrative(n), asOf: iso(asOf) };
    },
  });

  // The literal paths go before /narratives/:slug so that it never captures them.
  return { routes: [author, cohorts, cohort, narratives, rotationRoute, heatmapRoute, narrative] };
}
