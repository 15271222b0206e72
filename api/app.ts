import Koa from 'koa';
import type { Logger } from '../infra/logging.ts';
import { errorHandler } from './middleware/errors.ts';
import { requestId } from './middleware/request-id.ts';
import { healthRoutes, type HealthDeps } from './routes/health.ts';

export type ApiDeps = HealthDeps & { logger: Logger };

/** The Koa application: cross-cutting middleware first, then the route groups. */
export function createApp(deps: ApiDeps): Koa {
  const app = new Koa();
  app.use(requestId());
  app.use(errorHandler(deps.logger));
  const health = healthRoutes(deps);
  app.use(health.routes());
  app.use(health.allowedMethods());
  return app;
}
