import Router from '@koa/router';
import { keyOf } from '../middleware/auth.ts';
import { WINDOW_MS } from '../middleware/rate-limit.ts';
import { PLANS } from '../plans.ts';

/** GET /v1/key: the calling key (spec §2.10). Never shows the key or its hash. */
export function keyRoutes(): Router {
  const router = new Router();
  router.get('/v1/key', (ctx) => {
    const key = keyOf(ctx);
    const plan = PLANS[key.plan];
    const rateLimit = { limit: plan.requestsPerMinute, window_seconds: WINDOW_MS / 1000 };
    ctx.body = {
      object: 'key',
      id: key.id,
      name: key.name,
      dataset: 'live',
      livemode: true,
      mode: 'live',
      scopes: key.scopes,
      plan: key.plan,
      plan_limits: {
        rate_limit: rateLimit,
        features: {
          backtests: plan.features.backtests,
          scanner_delay_minutes: plan.features.scannerDelayMinutes,
          webhooks: plan.features.webhooks,
        },
      },
      rate_limit: rateLimit,
      created_at: new Date(key.createdAt).toISOString(),
    };
  });
  return router;
}
