import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, errorBody } from '../errors.ts';
import { newRequestId } from '../middleware/request-id.ts';

/**
 * Requests Node's HTTP parser refuses before Koa sees them (a request line or headers over
 * its limit, bytes that are not HTTP) get the spec's error body, 400 VALIDATION with the
 * reason, instead of Node's bare 431 or 400 without a body or a request id.
 */
export function answerMalformedRequests(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A client that went away, or a socket already answered, has no one to read an answer.
    if (err.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const requestId = newRequestId();
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const message = tooLarge ? 'the request line and headers are too large' : 'the request is not valid HTTP/1.1';
    const issue = { path: 'request', code: tooLarge ? 'too_big' : 'invalid_format', message };
    const body = JSON.stringify(errorBody(new ApiError('VALIDATION', message, { issues: [issue] }), requestId));
    socket.end(
      'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
