import Router from '@koa/router';
import type { Middleware } from 'koa';
import { z } from 'zod';
import { ReadModelError } from '../../projections/read-models/cursor.ts';
import { ApiError, type ValidationIssue } from '../errors.ts';
import { authorizeRoute } from '../middleware/auth.ts';
import { scopeOf } from '../scopes.ts';
import { readJsonBody } from './body.ts';
import type { ApiRoute } from './route.ts';
import { issuesOf, singleValuedQuery, validationError, type Location } from './validate.ts';
import { toWire, WireJson } from './wire.ts';

/**
 * Mounts routes on one @koa/router, each behind its guards: key and scope (401/403), plan
 * (402), then validation of path, query and body (400), then the handler, whose camelCase
 * result is serialised to snake_case. allowedMethods() answers a known path with a wrong
 * method: the error handler turns its bare 405 into METHOD_NOT_ALLOWED with `Allow`.
 */
export function mountRoutes(routes: readonly ApiRoute[]): Router {
  const router = new Router();
  for (const route of routes) {
    const scope = route.public ? null : scopeOf(route.method, route.path);
    if (!route.public && scope === null) throw new Error(`${route.method} ${route.path} has no scope in api/scopes.ts`);
    router.register(route.path, [route.method], [authorizeRoute(scope, route.planFeature), handle(route)]);
  }
  return router;
}

/** The query of a route without query parameters: it still refuses unknown ones. */
const NO_QUERY = z.strictObject({});

function handle(route: ApiRoute): Middleware {
  return async (ctx) => {
    const issues: ValidationIssue[] = [];
    const parse = <S extends z.ZodType>(location: Location, schema: S | undefined, value: unknown): z.output<S> | undefined => {
      if (schema === undefined) return undefined;
      const result = schema.safeParse(value);
      if (result.success) return result.data;
      issues.push(...issuesOf(location, result.error));
      return undefined;
    };
    const params = parse('path', route.params, ctx.params);
    const query = singleValuedQuery(ctx.query);
    issues.push(...query.issues);
    const parsedQuery = parse('query', route.query ?? NO_QUERY, query.values);
    const body = route.body ? parse('body', route.body, await readJsonBody(ctx)) : undefined;
    if (issues.length > 0) throw validationError(issues);
    try {
      const result = await route.handler({ params: params ?? {}, query: parsedQuery ?? {}, body, ctx } as never);
      if (result instanceof WireJson) {
        if (result.etag !== undefined) {
          ctx.set('ETag', result.etag);
          if (namesEntity(ctx.get('If-None-Match'), result.etag)) {
            ctx.status = 304;
            return;
          }
        }
        ctx.status = route.response.status ?? 200;
        ctx.type = 'application/json';
        ctx.body = result.body;
      } else {
        ctx.status = route.statusOf?.(result) ?? route.response.status ?? 200;
        ctx.body = toWire(result);
      }
    } catch (err) {
      throw err instanceof ReadModelError ? readModelValidation(err) : err;
    }
  };
}

/** A read model's refusal of what the schemas let through (e.g. a cursor of another query). */
function readModelValidation(err: ReadModelError): ApiError {
  const path = err.code === 'INVALID_CURSOR' ? 'query.cursor' : 'request';
  return new ApiError('VALIDATION', err.message, { issues: [{ path, code: err.code.toLowerCase(), message: err.message }] });
}

/**
 * Whether an If-None-Match header names the entity tag: `*`, or any tag of its list compared
 * weakly (RFC 9110 13.1.2: the W/ prefix is ignored on both sides).
 */
export function namesEntity(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch === '') return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === opaque(etag));
}
