import type { Middleware } from 'koa';
import type { Logger } from '../../infra/logging.ts';
import { StoreError } from '../../infra/store/errors.ts';
import { ApiError, errorBody } from '../errors.ts';

/**
 * Turns every failure into the spec's error body `{ error: { code, message, request_id } }`.
 * A store that cannot be reached becomes UPSTREAM_UNAVAILABLE; anything else unexpected
 * becomes INTERNAL without its message or stack, which go to the log.
 */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined && ctx.status === 404) throw new ApiError('NOT_FOUND', `no route for ${ctx.method} ${ctx.path}`);
      if (ctx.body === undefined && ctx.status === 405) {
        // The router's allowedMethods() set the status and the Allow header.
        throw new ApiError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed here; allowed: ${ctx.response.get('Allow')}`);
      }
    } catch (err) {
      const apiError =
        err instanceof ApiError
          ? err
          : err instanceof StoreError && (err.retryable || err.code === 'STORE_CLOSED')
            ? new ApiError('UPSTREAM_UNAVAILABLE', 'the analytical store is unavailable; retry')
            : new ApiError('INTERNAL', 'unexpected error; retry the request');
      if (!(err instanceof ApiError)) logger.error({ err, requestId: ctx.state.requestId, path: ctx.path }, 'request failed');
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.headers ?? {})) ctx.set(name, value);
      ctx.body = errorBody(apiError, ctx.state.requestId as string);
    }
  };
}
