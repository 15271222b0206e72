import { createRequire } from 'node:module';
import { z } from 'zod';
import { defineRoute, type ApiRoute } from '../http/route.ts';
import { WireJson } from '../http/wire.ts';
import { openApiDocument } from '../openapi.ts';
import type { RouteGroup } from './group.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** GET /openapi.json: the document of every route, itself included, built on first request. */
export function openApiRoutes(allRoutes: () => readonly ApiRoute[]): RouteGroup {
  let document: WireJson | null = null;
  const route = defineRoute({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'getOpenApi',
    tag: 'Meta',
    summary: 'This OpenAPI 3.1 document',
    public: true,
    response: { schema: z.looseObject({ openapi: z.string() }), description: 'The OpenAPI document.' },
    // Rendered as it is, once: its keys are OpenAPI's, not ours to rename.
    handler: () => (document ??= new WireJson(JSON.stringify(openApiDocument(allRoutes(), version)))),
  });
  return { routes: [route] };
}
