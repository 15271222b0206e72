import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

/**
 * Gives every request an id `req_<hex>`, exposed as X-Request-Id and in error bodies. From
 * randomUUID, whose random source is buffered, instead of a random-bytes call per request.
 */
export function requestId(): Middleware {
  return async (ctx, next) => {
    ctx.state.requestId = newRequestId();
    ctx.set('X-Request-Id', ctx.state.requestId);
    await next();
  };
}

export function newRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}
