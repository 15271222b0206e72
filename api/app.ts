import Koa from 'koa';
import type { Logger } from '../infra/logging.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import type { ProjectionTables } from '../projections/tables.ts';
import { KeyService } from './keys.ts';
import { authenticate, authorize } from './middleware/auth.ts';
import { errorHandler } from './middleware/errors.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { requestId } from './middleware/request-id.ts';
import { healthRoutes, type HealthDeps } from './routes/health.ts';
import { keyRoutes } from './routes/key.ts';

export type ApiDeps = HealthDeps & {
  logger: Logger;
  store: AnalyticalStore<ProjectionTables>;
  /** The clock of the key cache and the rate limiter; injected by tests to move time. */
  now?: () => number;
};

/**
 * The Koa application: cross-cutting middleware first, then the route groups. Order
 * matters: the caller is resolved before the rate limiter (which counts per key or IP and
 * sets its headers), and refused (401/403) only after it, so every response carries them.
 */
export function createApp(deps: ApiDeps): Koa {
  const app = new Koa();
  const keys = new KeyService({ store: deps.store, now: deps.now });
  app.use(requestId());
  app.use(errorHandler(deps.logger));
  app.use(authenticate(keys));
  app.use(rateLimit({ now: deps.now }));
  app.use(authorize());
  for (const router of [healthRoutes(deps), keyRoutes()]) {
    app.use(router.routes());
    app.use(router.allowedMethods());
  }
  return app;
}
