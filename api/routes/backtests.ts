import type { Context } from 'koa';
import { DATASET, header } from '../../presenters/resource.ts';
import { activeBacktestsOfKey, backtestsOfKey, getBacktest, type BacktestView } from '../../projections/read-models/research.ts';
import { appendBacktestRequest, newRunId } from '../../research/runs/commands.ts';
import { presentBacktest } from '../../research/runs/present.ts';
import { specOf } from '../backtest-spec.ts';
import { BacktestRequestSchema, TERMINAL_RUN_STATUSES, type BacktestRunStatus } from '../../schemas/records.ts';
import { ApiError } from '../errors.ts';
import { defineRoute } from '../http/route.ts';
import { keyOf } from '../middleware/auth.ts';
import { PLANS } from '../plans.ts';
import {
  BacktestIdParamsSchema,
  BacktestListSchema,
  BacktestRunSchema,
  BacktestsQuerySchema,
  CreateBacktestBodySchema,
} from '../schemas/research.ts';
import { untilApplied } from '../services/read-your-writes.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

/**
 * Backtests (spec 2.8, 3, 4.4): a POST appends a request to control.backtests and answers
 * once the projection shows it; the research role runs it and records its progress and
 * result on research.backtest-runs, which GET reads. A key sees only its own runs.
 */
export function backtestRoutes({ store, log, now, codec }: RouteDeps): RouteGroup {
  /** One queue per key: two concurrent POSTs of a key cannot both pass its limit. */
  const perKey = new Map<string, Promise<unknown>>();

  async function ownRun(ctx: Context, id: string): Promise<BacktestView> {
    const view = await getBacktest(store, id);
    if (view === null || view.request.key_id !== keyOf(ctx).id || view.request.dataset !== DATASET) throw new ApiError('NOT_FOUND', `no backtest run ${id}`);
    return view;
  }

  const applied = (id: string, version: number): Promise<BacktestView> =>
    untilApplied(async () => {
      const view = await getBacktest(store, id);
      return view && { ...view, version: view.request.version };
    }, version, id);

  const LIMITS = (['pro', 'team'] as const).map((p) => `${PLANS[p].label} ${PLANS[p].features.concurrentBacktests}`).join(', ');

  const create = defineRoute({
    method: 'POST',
    path: '/v1/quant/backtests',
    operationId: 'createBacktest',
    tag: 'Research',
    summary: 'Queue a backtest',
    description:
      'Queues a strict point-in-time backtest and answers 202 with the queued run and a `Location` header (`/v1/quant/backtests/{id}`) ' +
      'to poll. Pro and Team plans; 402 PLAN_REQUIRED on Free. 409 LIMIT_REACHED when the key already has as many runs queued or ' +
      `running as its plan allows (${LIMITS}). The research role checks the limit again in the order the requests reached the log, ` +
      'so requests taken at the same moment by several API processes cannot pass it together: one past it ends `failed` with a ' +
      '`reason` that starts with `LIMIT_REACHED`.',
    planFeature: 'backtests',
    body: CreateBacktestBodySchema,
    errors: ['LIMIT_REACHED'],
    response: {
      status: 202,
      schema: BacktestRunSchema,
      description: 'The queued run; poll its Location.',
      headers: { Location: 'The run to poll: `/v1/quant/backtests/{id}`.' },
    },
    handler: async ({ body, ctx }) => {
      const key = keyOf(ctx);
      const previous = perKey.get(key.id) ?? Promise.resolve();
      const mine = previous.catch(() => undefined).then(async () => {
        const quota = PLANS[key.plan].features.concurrentBacktests;
        if ((await activeBacktestsOfKey(store, key.id)) >= quota) {
          throw new ApiError('LIMIT_REACHED', `the ${PLANS[key.plan].label} plan allows ${quota} backtest runs queued or running at once per key`);
        }
        const runId = newRunId();
        const at = now();
        const request = BacktestRequestSchema.parse({
          runId,
          action: 'queue',
          version: 1,
          keyId: key.id,
          teamId: key.team?.id ?? null,
          dataset: DATASET,
          plan: key.plan,
          name: body.name ?? null,
          spec: JSON.stringify(specOf(body)),
          createdAt: at,
          cancelRequestedAt: null,
          ts: at,
        });
        await appendBacktestRequest(log, codec, request);
        return applied(runId, 1);
      });
      perKey.set(key.id, mine);
      try {
        const view = await mine;
        ctx.set('Location', `/v1/quant/backtests/${view.request.run_id}`);
        return presentBacktest(view);
      } finally {
        if (perKey.get(key.id) === mine) perKey.delete(key.id);
      }
    },
  });

  const list = defineRoute({
    method: 'GET',
    path: '/v1/quant/backtests',
    operationId: 'listBacktests',
    tag: 'Research',
    summary: "The key's backtest runs",
    description: 'The runs the calling key queued, newest first, in every status.',
    query: BacktestsQuerySchema,
    response: { schema: BacktestListSchema, description: 'A page of runs.' },
    handler: async ({ query, ctx }) => {
      const page = await backtestsOfKey(store, keyOf(ctx).id, query.limit, query.cursor);
      return { ...header('list'), data: page.rows.map(presentBacktest), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  });

  const one = defineRoute({
    method: 'GET',
    path: '/v1/quant/backtests/:id',
    operationId: 'getBacktest',
    tag: 'Research',
    summary: 'One backtest run',
    description: 'The run: `queued`, `running` with progress (snapshots scanned of total), then `done` with the result, `failed` or `canceled` with a reason.',
    params: BacktestIdParamsSchema,
    errors: ['NOT_FOUND'],
    response: { schema: BacktestRunSchema, description: 'The run.' },
    handler: async ({ params, ctx }) => presentBacktest(await ownRun(ctx, params.id)),
  });

  const cancel = defineRoute({
    method: 'POST',
    path: '/v1/quant/backtests/:id/cancel',
    operationId: 'cancelBacktest',
    tag: 'Research',
    summary: 'Cancel a backtest run',
    description:
      'Asks the runner to stop a queued or running run; answers once the request is recorded (`cancel_requested_at`). The run then ' +
      'turns `canceled` as soon as the runner sees it. 409 CONFLICT when the run has already ended.',
    params: BacktestIdParamsSchema,
    errors: ['NOT_FOUND', 'CONFLICT'],
    response: { schema: BacktestRunSchema, description: 'The run, with its cancel recorded.' },
    handler: async ({ params, ctx }) => {
      const view = await ownRun(ctx, params.id);
      const status = (view.run?.status ?? 'queued') as BacktestRunStatus | 'queued';
      if (status !== 'queued' && TERMINAL_RUN_STATUSES.includes(status)) throw new ApiError('CONFLICT', `run ${params.id} has already ended (${status})`);
      if (view.request.cancel_requested_at !== null) return presentBacktest(view);
      const r = view.request;
      const at = Math.max(now(), r.ts);
      await appendBacktestRequest(log, codec, {
        runId: r.run_id,
        action: 'cancel',
        version: r.version + 1,
        keyId: r.key_id,
        teamId: r.team_id,
        dataset: r.dataset,
        plan: r.plan as 'pro' | 'team',
        name: r.name,
        spec: r.spec,
        createdAt: r.created_at,
        cancelRequestedAt: at,
        ts: at,
      });
      return presentBacktest(await applied(r.run_id, r.version + 1));
    },
  });

  return { routes: [create, list, one, cancel] };
}
