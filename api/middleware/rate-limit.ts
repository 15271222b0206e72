import type { Context, Middleware } from 'koa';
import { PLANS } from '../plans.ts';
import { ApiError } from '../errors.ts';
import { authOf } from './auth.ts';

export const WINDOW_MS = 60_000;
/** Public endpoints (and failed authentication) per client IP; the spec leaves the value open. */
export const PUBLIC_REQUESTS_PER_MINUTE = 120;

export interface RateLimitOptions {
  /** Injected so tests can move time instead of sleeping. */
  now?: () => number;
  publicPerMinute?: number;
}

/**
 * Fixed 60 s windows aligned to the clock's minutes, one counter per key (plan limit) or,
 * for requests without a valid key, per client IP. Aligned windows let the whole table be
 * dropped when a minute ends, so memory is bounded by the clients of one minute; the cost
 * is that a client may spend up to twice its limit across a window boundary. Counters
 * live in this process: with several API processes each enforces the limit on its own.
 * Must run after authenticate() and before anything that can refuse a request, so every
 * response, errors included, carries the headers (spec §8).
 */
export function rateLimit({ now = Date.now, publicPerMinute = PUBLIC_REQUESTS_PER_MINUTE }: RateLimitOptions = {}): Middleware {
  let windowStart = -1;
  const counts = new Map<string, number>();
  return async (ctx, next) => {
    const at = now();
    const start = Math.floor(at / WINDOW_MS) * WINDOW_MS;
    if (start !== windowStart) {
      windowStart = start;
      counts.clear();
    }
    const { bucket, limit } = bucketOf(ctx, publicPerMinute);
    const used = (counts.get(bucket) ?? 0) + 1;
    counts.set(bucket, used);
    const resetMs = start + WINDOW_MS;
    const resetSeconds = Math.max(1, Math.ceil((resetMs - at) / 1000));
    const remaining = Math.max(0, limit - used);
    ctx.set({
      'RateLimit-Limit': String(limit),
      'RateLimit-Remaining': String(remaining),
      'RateLimit-Reset': String(resetSeconds),
      'RateLimit-Policy': `${limit};w=${WINDOW_MS / 1000}`,
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(remaining),
      'X-RateLimit-Reset': String(Math.floor(resetMs / 1000)),
    });
    if (used > limit) {
      throw new ApiError('RATE_LIMITED', `rate limit of ${limit} requests per minute exceeded; retry in ${resetSeconds} s`, undefined, {
        'Retry-After': String(resetSeconds),
      });
    }
    await next();
  };
}

function bucketOf(ctx: Context, publicPerMinute: number): { bucket: string; limit: number } {
  const auth = authOf(ctx);
  if (auth.kind === 'key') return { bucket: `key:${auth.key.id}`, limit: PLANS[auth.key.plan].requestsPerMinute };
  return { bucket: `ip:${ctx.ip}`, limit: publicPerMinute };
}
