import type { Context } from 'koa';
import type { z } from 'zod';
import type { ErrorCode } from '../errors.ts';
import type { PlanFeature } from '../plans.ts';
import type { WireJson } from './wire.ts';

/**
 * One endpoint, declared once: its inputs as zod schemas (which validate the request and
 * become the OpenAPI parameters and body), its response schema (which becomes the OpenAPI
 * response), the errors it can answer with, and its handler. The router (router.ts) and
 * the OpenAPI document (openapi.ts) are both built from the same list of these, so the
 * document cannot drift from the code.
 */

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

type AnyObject = z.ZodObject;

export interface RouteInput<P extends AnyObject | undefined, Q extends AnyObject | undefined, B extends z.ZodType | undefined> {
  params: P extends AnyObject ? z.output<P> : Record<string, never>;
  query: Q extends AnyObject ? z.output<Q> : Record<string, never>;
  body: B extends z.ZodType ? z.output<B> : undefined;
  ctx: Context;
}

export interface RouteSpec<
  P extends AnyObject | undefined = AnyObject | undefined,
  Q extends AnyObject | undefined = AnyObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  R extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** Koa-style template, `:name` for a path parameter. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Public endpoints need no key (and are limited per IP); all others need the scope in scopes.ts. */
  public?: boolean;
  /** 402 PLAN_REQUIRED unless the key's plan includes this. */
  planFeature?: PlanFeature;
  params?: P;
  query?: Q;
  body?: B;
  response: {
    status?: number;
    /** Registered in api/schemas/registry.ts: it becomes a named component of the document. */
    schema: R;
    description: string;
    /** Headers the successful answer carries besides the common ones (e.g. Location), documented in /openapi.json. */
    headers?: Readonly<Record<string, string>>;
  };
  /**
   * The status of a successful answer when it depends on the result (e.g. health answers
   * 503 while degraded, with its body); response.status (default 200) otherwise.
   */
  statusOf?: (result: z.input<R>) => number;
  /**
   * The answer carries an `ETag` (weak: members computed per request, such as a freshness age,
   * may differ) and a request whose `If-None-Match` names it gets 304 without a body. The
   * handler returns a WireJson with its etag.
   */
  conditional?: boolean;
  /** Errors this endpoint answers besides those every endpoint can (see openapi.ts). */
  errors?: readonly ErrorCode[];
  /** Returns the response body in camelCase, which the router serialises (wire.ts), or one already rendered. */
  handler: (input: RouteInput<P, Q, B>) => Promise<z.input<R> | WireJson> | z.input<R> | WireJson;
}

export type ApiRoute = RouteSpec<AnyObject | undefined, AnyObject | undefined, z.ZodType | undefined, z.ZodType>;

/** Identity with inference: lets a route's handler see the types of its own schemas. */
export function defineRoute<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
>(spec: RouteSpec<P, Q, B, R>): ApiRoute {
  return spec as unknown as ApiRoute;
}
