import type { ApiRoute } from '../http/route.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup, RouteGroupFactory } from './group.ts';
import { backtestRoutes } from './backtests.ts';
import { eventStudyRoutes } from './event-studies.ts';
import { keyRoutes } from './key.ts';
import { metaRoutes } from './meta.ts';
import { openApiRoutes } from './openapi.ts';
import { signalRoutes } from './signals.ts';
import { socialRoutes } from './social.ts';
import { tokenHistoryRoutes } from './token-history.ts';
import { tokenRoutes } from './tokens.ts';
import { webhookRoutes } from './webhooks.ts';

const GROUPS: readonly RouteGroupFactory[] = [tokenRoutes, tokenHistoryRoutes, signalRoutes, socialRoutes, backtestRoutes, eventStudyRoutes, webhookRoutes, keyRoutes, metaRoutes];

/** Every route of the API, in the order of the spec's sections, and how to stop their background work. */
export function apiRoutes(deps: RouteDeps): RouteGroup & { routes: ApiRoute[]; close: () => Promise<void> } {
  const groups = GROUPS.map((group) => group(deps));
  const routes: ApiRoute[] = groups.flatMap((g) => g.routes);
  routes.push(...openApiRoutes(() => routes).routes);
  return {
    routes,
    close: async () => {
      for (const g of groups) await g.close?.();
    },
  };
}
