import { signalRuleDocs } from '../../processors/quant-engine/signals/rules.ts';
import { getSignal } from '../../projections/read-models/signals.ts';
import { resolveTokenRef } from '../../projections/read-models/token-ref.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import { ApiError } from '../errors.ts';
import { defineRoute } from '../http/route.ts';
import { withMembers } from '../http/wire.ts';
import { presentFiring, presentSignal } from '../../presenters/signal.ts';
import { iso } from '../schemas/common.ts';
import { SignalDetailQuerySchema, SignalDetailSchema, SignalFeedQuerySchema, SignalIdParamsSchema, SignalListSchema } from '../schemas/signals.ts';
import { MIRROR_REFRESH_MS } from '../services/hourly-mirror.ts';
import { PointInTime } from '../services/point-in-time.ts';
import { LIST_HEADER, RenderedRows } from '../services/rendered-rows.ts';
import { SignalFeed } from '../services/signal-feed.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

/** GET /v1/quant/signals and /v1/quant/signals/{id} (spec 2.4, 4.2). */
export function signalRoutes({ store, now, tokens: directory }: RouteDeps): RouteGroup {
  const rules = new Map(signalRuleDocs().map((doc) => [doc.ruleVersion, doc]));
  const pointInTime = new PointInTime({ store, now });
  const signals = new SignalFeed({ store, now });
  const signalRows = new RenderedRows({ present: presentSignal, tokenIdOf: (s: Signal) => s.tokenId, directory });

  const feed = defineRoute({
    method: 'GET',
    path: '/v1/quant/signals',
    operationId: 'listSignals',
    tag: 'Signals',
    summary: 'Signal feed',
    description:
      'Signals newest first (by fire time, then id), cursor-paginated. Every filter must hold; minimums compare with the value at fire time, ' +
      'and a signal whose value was unknown then never passes one. `created_after` takes ISO-8601 with an offset, or unix time: ' +
      'below 10^11 seconds, from there on milliseconds. An unknown `token` answers 404. The feed is read as of one time: `as_of` ' +
      'when given, else the newest firing or end stored. As of a time, the feed holds the signals fired by then, each with its ' +
      'status then (a signal that ended later is `active`, `ended_at` null), and `status` filters on that status. `next_cursor` ' +
      "carries the first page's `as_of`, so every page reads the feed as of the same time. " +
      `The feed is served from memory: a signal fired or ended shows here at most ${MIRROR_REFRESH_MS / 1000} s after it reaches the store.`,
    query: SignalFeedQuerySchema,
    errors: ['NOT_FOUND'],
    response: { schema: SignalListSchema, description: 'A page of signals.' },
    handler: async ({ query }) => {
      const asOf = await pointInTime.check(query.as_of, 'query.as_of');
      let tokenId: string | undefined;
      if (query.token !== undefined) {
        const token = await resolveTokenRef(store, query.token);
        if (token === null) throw new ApiError('NOT_FOUND', `no token ${JSON.stringify(query.token)}`);
        tokenId = token.token_id;
      }
      const page = await signals.page({
        minScore: query.min_score,
        types: query.signal_type,
        chains: query.chain,
        marketCap: query.market_cap,
        liquidity: query.liquidity,
        createdAfter: query.created_after,
        status: query.status,
        tokenId,
        limit: query.limit,
        cursor: query.cursor,
        asOf,
      });
      return withMembers(LIST_HEADER, {
        data: await signalRows.render(page.rows),
        hasMore: page.hasMore,
        nextCursor: page.nextCursor,
        asOf: iso(page.asOf),
      });
    },
  });

  const detail = defineRoute({
    method: 'GET',
    path: '/v1/quant/signals/:id',
    operationId: 'getSignal',
    tag: 'Signals',
    summary: 'One signal with detail',
    description:
      'The signal with the conditions that held (threshold against actual), the feature snapshot it fired on, its analog summary, ' +
      "earlier firings of its rule on the same token and the rule's documentation. With `as_of`, the signal as it stood then " +
      '(404 when it had not fired yet; `active` when it ended later), and so are its prior firings.',
    params: SignalIdParamsSchema,
    query: SignalDetailQuerySchema,
    errors: ['NOT_FOUND'],
    response: { schema: SignalDetailSchema, description: 'The signal.' },
    handler: async ({ params, query }) => {
      const asked = await pointInTime.check(query.as_of, 'query.as_of');
      const found = await getSignal(store, params.id, asked);
      if (found === null) throw new ApiError('NOT_FOUND', asked === undefined ? `no signal ${params.id}` : `no signal ${params.id} had fired by ${iso(asked)}`);
      const { signal, priorFirings, asOf } = found;
      const tokens = await directory.rows([signal.tokenId]);
      return {
        ...presentSignal(signal, tokens),
        conditions: signal.conditions,
        features: signal.features,
        priorFirings: { count: signal.priorFirings, data: priorFirings.map(presentFiring) },
        rule: rules.get(signal.ruleVersion) ?? null,
        asOf: iso(asOf),
      };
    },
  });

  return { routes: [feed, detail] };
}
