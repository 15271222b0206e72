import type { Context } from 'koa';
import { ApiError } from '../errors.ts';

/** The largest request body accepted, in bytes; a larger one is refused with 413 unread. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The request body parsed as JSON. No body (or an empty one) reads as undefined, left to
 * the route's schema to refuse. A declared Content-Length over the limit is refused before
 * reading; a chunked body is counted as it arrives and refused when it passes the limit.
 */
export async function readJsonBody(ctx: Context, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const declared = Number(ctx.get('Content-Length') || '0');
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  if (!ctx.is('application/json')) {
    throw new ApiError('VALIDATION', 'the body must be JSON, sent with Content-Type: application/json', {
      issues: [{ path: 'body', code: 'invalid_content_type', message: 'Content-Type must be application/json', expected: 'application/json' }],
    });
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch (err) {
    throw new ApiError('VALIDATION', 'the body is not valid JSON', {
      issues: [{ path: 'body', code: 'invalid_json', message: (err as Error).message }],
    });
  }
}

function tooLarge(maxBytes: number): ApiError {
  // The rest of the body is not read; closing the connection stops the client sending it.
  return new ApiError('PAYLOAD_TOO_LARGE', `the request body is larger than ${maxBytes} bytes`, undefined, { Connection: 'close' });
}
