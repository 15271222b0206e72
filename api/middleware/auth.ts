import type { Context, Middleware } from 'koa';
import { StoreError } from '../../infra/store/errors.ts';
import { ApiError } from '../errors.ts';
import { hashApiKey, isWellFormedApiKey, type ApiKey, type KeyService } from '../keys.ts';
import { planHasFeature, plansWith, type PlanFeature } from '../plans.ts';
import { ENDPOINT_SCOPES, PUBLIC_PATHS, type Scope } from '../scopes.ts';

/** Who is calling: a valid key, or nobody (with why, for the 401 message). */
export type Auth =
  | { kind: 'key'; key: ApiKey }
  | { kind: 'anonymous'; reason: 'public' | 'missing' | 'malformed' | 'unknown' | 'revoked' };

const REASONS: Record<Exclude<Extract<Auth, { kind: 'anonymous' }>['reason'], 'public'>, string> = {
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
 * limiter can count refused requests too (per IP) and put its headers on the 401.
 * Public endpoints are never looked up: they are limited per IP whatever the caller sends.
 */
export function authenticate(keys: KeyService): Middleware {
  return async (ctx, next) => {
    ctx.state.auth = PUBLIC_PATHS.has(ctx.path) ? { kind: 'anonymous', reason: 'public' } : await resolve(ctx, keys);
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
    if (err instanceof StoreError) throw new ApiError('UPSTREAM_UNAVAILABLE', 'the key store is unavailable; retry');
    throw err;
  }
  if (key === null) return { kind: 'anonymous', reason: 'unknown' };
  if (key.revokedAt !== null) return { kind: 'anonymous', reason: 'revoked' };
  return { kind: 'key', key };
}

interface CompiledEndpoint {
  method: string;
  pattern: RegExp;
  scope: Scope;
}

/** Fewest parameters first, so /narratives/rotation wins over /narratives/:slug. */
const COMPILED: CompiledEndpoint[] = [...ENDPOINT_SCOPES]
  .sort((a, b) => paramCount(a.path) - paramCount(b.path))
  .map((e) => ({ method: e.method, scope: e.scope, pattern: new RegExp(`^${e.path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`) }));

function paramCount(path: string): number {
  return path.split('/').filter((segment) => segment.startsWith(':')).length;
}

export function requiredScope(method: string, path: string): Scope | null {
  return COMPILED.find((e) => e.method === method && e.pattern.test(path))?.scope ?? null;
}

/**
 * Refuses what authenticate() resolved: every non-public path needs a valid key (401),
 * and the scope ENDPOINT_SCOPES names for it (403).
 */
export function authorize(): Middleware {
  return async (ctx, next) => {
    if (PUBLIC_PATHS.has(ctx.path)) return next();
    const auth = authOf(ctx);
    if (auth.kind !== 'key') throw new ApiError('UNAUTHORIZED', auth.reason === 'public' ? REASONS.missing : REASONS[auth.reason]);
    const scope = requiredScope(ctx.method === 'HEAD' ? 'GET' : ctx.method, ctx.path);
    if (scope !== null && !auth.key.scopes.includes(scope)) {
      throw new ApiError('FORBIDDEN', `this key lacks the scope ${scope}`);
    }
    await next();
  };
}

/** Route guard: 402 PLAN_REQUIRED when the key's plan does not include the feature. */
export function requirePlanFeature(feature: PlanFeature): Middleware {
  return async (ctx, next) => {
    const key = keyOf(ctx);
    if (!planHasFeature(key.plan, feature)) {
      throw new ApiError('PLAN_REQUIRED', `${feature} needs the ${plansWith(feature).join(' or ')} plan`);
    }
    await next();
  };
}
