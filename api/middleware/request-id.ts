import { randomBytes } from 'node:crypto';
import type { Middleware } from 'koa';

/** Gives every request an id `req_<hex>`, exposed as X-Request-Id and in error bodies. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    ctx.state.requestId = `req_${randomBytes(12).toString('hex')}`;
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}
