import type { Middleware } from 'koa';

/**
 * `Server-Timing: app;dur=<ms>` on every answer: the time the service spent on the request,
 * from its arrival to its answer being ready. A browser shows it in its network panel and in
 * the Resource Timing API, so a client can tell the service's time from the network's and its own.
 */
export function serverTiming(): Middleware {
  return async (ctx, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      ctx.set('Server-Timing', `app;dur=${(performance.now() - start).toFixed(1)}`);
    }
  };
}
