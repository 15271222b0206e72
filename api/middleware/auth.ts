import type { Context, Middleware } from 'koa';
import { ApiError } from '../errors.ts';
import { hashApiKey, isWellFormedApiKey, KeysUnavailableError, type ApiKey, type KeyService } from '../keys.ts';
import { planHasFeature, plansWith, type PlanFeature } from '../plans.ts';
import type { Scope } from '../scopes.ts';

/** Who is calling: a valid key, or nobody (with why, for the 401 message). */
export type Auth =
  | { kind: 'key'; key: ApiKey }
  | { kind: 'anonymous'; reason: 'public' | 'missing' | 'malformed' | 'unknown' | 'revoked' | 'unavailable' };

const REASONS: Record<Exclude<Extract<Auth, { kind: 'anonymous' }>['reason'], 'public' | 'unavailable'>, string> = {
  missing: 'no API key: send Authorization: Bearer <key> or the x-api-key header',
  malformed: 'the API key is malformed',
  unknown: 'the API key is unknown',
  revoked: 'the API key has been revoked',
};

export function authOf(ctx: Context): Auth {
  return (ctx.state.auth as Auth | undefined) ?? { kind: 'anonymous', reason: 'missing' };
}

/** The calling key; only for routes behind authorize(), which guarantees one. */
export function keyOf(ctx: Context): ApiKey {
  const auth = authOf(ctx);
  if (auth.kind !== 'key') throw new ApiError('UNAUTHORIZED', REASONS.missing);
  return auth.key;
}

/** The key sent with the request: `Authorization: Bearer <key>` first, else `x-api-key`. */
function presentedKey(ctx: Context): string | null {
  const authorization = ctx.get('Authorization');
  if (authorization !== '') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match ? match[1] : '';
  }
  const header = ctx.get('x-api-key').trim();
  return header === '' ? null : header;
}

/**
 * Resolves the caller into ctx.state.auth without refusing anything yet, so the rate
 * limiter can count refused requests too (per IP) and put its headers on the 401 or 503.
 * Keys sent to public paths are never looked up: those are limited per IP whatever the
 * caller sends.
 */
export function authenticate(keys: KeyService, publicPaths: ReadonlySet<string>): Middleware {
  return async (ctx, next) => {
    ctx.state.auth = publicPaths.has(ctx.path) ? { kind: 'anonymous', reason: 'public' } : await resolve(ctx, keys);
    await next();
  };
}

async function resolve(ctx: Context, keys: KeyService): Promise<Auth> {
  const presented = presentedKey(ctx);
  if (presented === null) return { kind: 'anonymous', reason: 'missing' };
  if (!isWellFormedApiKey(presented)) return { kind: 'anonymous', reason: 'malformed' };
  let key: ApiKey | null;
  try {
    key = await keys.findByHash(hashApiKey(presented));
  } catch (err) {
    // Refused later, by the route's guard, so the rate limiter still counts it and sets its headers.
    if (err instanceof KeysUnavailableError) return { kind: 'anonymous', reason: 'unavailable' };
    throw err;
  }
  if (key === null) return { kind: 'anonymous', reason: 'unknown' };
  if (key.revokedAt !== null) return { kind: 'anonymous', reason: 'revoked' };
  return { kind: 'key', key };
}

/**
 * A route's guard: a valid key (401), the route's scope (403) and its plan feature (402),
 * in that order. Public routes (scope null) pass. Unknown paths never reach a guard, so
 * they answer 404 with or without a key.
 */
export function authorizeRoute(scope: Scope | null, feature?: PlanFeature): Middleware {
  return async (ctx, next) => {
    if (scope === null) return next();
    const auth = authOf(ctx);
    if (auth.kind !== 'key') {
      if (auth.reason === 'unavailable') throw new ApiError('UPSTREAM_UNAVAILABLE', 'the keys cannot be read from the log; retry');
      throw new ApiError('UNAUTHORIZED', auth.reason === 'public' ? REASONS.missing : REASONS[auth.reason]);
    }
    if (!auth.key.scopes.includes(scope)) throw new ApiError('FORBIDDEN', `this key lacks the scope ${scope}`);
    if (feature !== undefined && !planHasFeature(auth.key.plan, feature)) {
      throw new ApiError('PLAN_REQUIRED', `${feature} needs the ${plansWith(feature).join(' or ')} plan`);
    }
    await next();
  };
}
