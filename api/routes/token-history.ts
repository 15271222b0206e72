import type { z } from 'zod';
import { historyCursor, HISTORY_STEPS, snapshotSpan, tokenHistory, type HistoryStep } from '../../projections/read-models/token-history.ts';
import { resolveTokenRef } from '../../projections/read-models/token-ref.ts';
import { presentToken } from '../../presenters/token.ts';
import { ApiError } from '../errors.ts';
import { defineRoute } from '../http/route.ts';
import { keyOf } from '../middleware/auth.ts';
import { PLANS } from '../plans.ts';
import { DISCLAIMER, header, iso } from '../schemas/common.ts';
import { TokenHistoryQuerySchema, TokenHistorySchema } from '../schemas/token-history.ts';
import { TokenParamsSchema } from '../schemas/tokens.ts';
import { PointInTime } from '../services/point-in-time.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

/** Points a range has by default at each step: a day of 5m, a week of 1h, a quarter of 1d. */
const DEFAULT_POINTS: Readonly<Record<HistoryStep, number>> = { '5m': 288, '1h': 168, '1d': 90 };
const DAY_MS = 86_400_000;

const reachText = Object.values(PLANS)
  .map((p) => `${p.label} ${p.features.historyDays === null ? 'all of it' : `${p.features.historyDays} days`}`)
  .join(', ');

/** GET /v1/quant/token/{token}/history (beyond the spec): what a chart of a token over time needs. */
export function tokenHistoryRoutes({ store, now }: RouteDeps): RouteGroup {
  const pointInTime = new PointInTime({ store, now });

  const getHistory = defineRoute({
    method: 'GET',
    path: '/v1/quant/token/:token/history',
    operationId: 'getTokenHistory',
    tag: 'Tokens',
    summary: "A token's scores, chosen features and price over time",
    description:
      'One point per `step` over a range, oldest first, each point in time: the values of the latest snapshot of the token at or ' +
      'before the point (`snapshot_ts`), what the service knew at that time; nothing stored later changes a point. Points start at ' +
      "the token's first snapshot. Without `as_of`, the answer is as of the token's latest stored snapshot; `to` is at most `as_of`. " +
      `How far back \`from\` may reach from \`as_of\` depends on the plan (${reachText}); earlier answers 402 PLAN_REQUIRED. ` +
      'Paged forward in time with `next_cursor`, which carries the first page\'s `as_of`.',
    params: TokenParamsSchema,
    query: TokenHistoryQuerySchema,
    response: { schema: TokenHistorySchema, description: 'One page of points.' },
    errors: ['NOT_FOUND', 'PLAN_REQUIRED'],
    handler: async ({ params, query, ctx }): Promise<z.input<typeof TokenHistorySchema>> => {
      const asked = await pointInTime.check(query.as_of, 'query.as_of');
      const token = await resolveTokenRef(store, params.token);
      if (token === null) throw new ApiError('NOT_FOUND', `no token matches ${JSON.stringify(params.token)}`);
      const span = await snapshotSpan(store, token.token_id);
      if (span === null || (asked !== undefined && span.first > asked)) {
        throw new ApiError('NOT_FOUND', `token ${token.token_id} had no quant snapshot yet${asked === undefined ? '' : ` at ${iso(asked)}`}`);
      }
      const filters = { step: query.step, from: query.from, to: query.to, features: query.features, limit: query.limit };
      const cursor = query.cursor === undefined ? undefined : historyCursor(query.cursor, token.token_id, query.step, filters, asked);
      const asOf = asked ?? cursor?.asOf ?? span.latest;
      const to = Math.min(query.to ?? asOf, asOf);

      const { label, features: planFeatures } = PLANS[keyOf(ctx).plan];
      const reachMs = planFeatures.historyDays === null ? null : planFeatures.historyDays * DAY_MS;
      const earliest = reachMs === null ? -Infinity : asOf - reachMs;
      const from = query.from ?? Math.max(to - (DEFAULT_POINTS[query.step] - 1) * HISTORY_STEPS[query.step], earliest);
      if (from < earliest) {
        throw new ApiError('PLAN_REQUIRED', `the ${label} plan reads a token's history ${planFeatures.historyDays} days back from as_of; from ${iso(from)} is earlier than ${iso(earliest)}`);
      }
      if (from > to) {
        const message = `query.from: ${iso(from)} is after the end of the range, ${iso(to)}`;
        throw new ApiError('VALIDATION', message, { issues: [{ path: 'query.from', code: 'too_big', message, maximum: Math.floor(to / 1000), inclusive: true }] });
      }

      const page = await tokenHistory(store, span, { tokenId: token.token_id, step: query.step, from, to, limit: query.limit, cursor, asOf, filters });
      const chosen = query.features ?? [];
      return {
        ...header('list'),
        token: presentToken(token),
        step: query.step,
        from: iso(from),
        to: iso(to),
        data: page.points.map(({ ts, snapshot }) => ({
          ts: iso(ts),
          snapshotId: snapshot.snapshotId,
          snapshotTs: iso(snapshot.ts),
          scores: snapshot.scores,
          features: Object.fromEntries(chosen.map((name) => [name, snapshot.features[name] ?? null])),
          priceUsd: snapshot.market.priceUsd,
        })),
        hasMore: page.nextCursor !== null,
        nextCursor: page.nextCursor,
        asOf: iso(asOf),
        disclaimer: DISCLAIMER,
      };
    },
  });

  return { routes: [getHistory] };
}
