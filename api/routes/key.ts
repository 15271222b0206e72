import { defineRoute } from '../http/route.ts';
import { keyOf } from '../middleware/auth.ts';
import { WINDOW_MS } from '../middleware/rate-limit.ts';
import { PLANS } from '../plans.ts';
import { header, iso } from '../schemas/common.ts';
import { KeySchema } from '../schemas/key.ts';
import type { RouteGroup } from './group.ts';

/** GET /v1/key: the calling key (spec §2.10). */
export function keyRoutes(): RouteGroup {
  const describeKey = defineRoute({
    method: 'GET',
    path: '/v1/key',
    operationId: 'getKey',
    tag: 'Meta',
    summary: 'The calling key',
    description: 'Mode, dataset, scopes, plan, its rate limit and plan limits. The key itself is never shown again.',
    response: { schema: KeySchema, description: 'The calling key.' },
    handler: ({ ctx }) => {
      const key = keyOf(ctx);
      const plan = PLANS[key.plan];
      const rateLimit = { limit: plan.requestsPerMinute, windowSeconds: WINDOW_MS / 1000 };
      return {
        ...header('key'),
        id: key.id,
        name: key.name,
        mode: 'live' as const,
        scopes: key.scopes,
        plan: key.plan,
        planLimits: {
          rateLimit,
          features: {
            backtests: plan.features.backtests,
            concurrentBacktests: plan.features.concurrentBacktests,
            scannerDelayMinutes: plan.features.scannerDelayMinutes,
            webhooks: plan.features.webhooks,
            historyDays: plan.features.historyDays,
          },
        },
        rateLimit,
        createdAt: iso(key.createdAt),
        team: key.team,
      };
    },
  });
  return { routes: [describeKey] };
}
