import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApi, type Api } from '../../api/app.ts';
import { defineRoute } from '../../api/http/route.ts';
import { pino } from 'pino';

/** What a failure inside a handler, or a request HTTP's parser refuses, looks like from outside: the spec's error body with the request id, no internals. */
describe('unexpected errors', () => {
  const logged: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => logged.push(line) });
  let api: Api;
  let base: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const boom = defineRoute({
      method: 'GET',
      path: '/v1/boom',
      operationId: 'boom',
      tag: 'Test',
      summary: 'fails',
      public: true,
      response: { schema: z.object({}), description: 'never' },
      handler: () => {
        throw new Error('secret detail at /srv/internal/path');
      },
    });
    // The failing route is public, so neither the key store nor the log is ever asked.
    api = createApi({ log: {} as never, codec: {} as never, store: {} as never, logger, startedAt: 0, extraRoutes: [boom] });
    const server = api.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  });

  afterAll(async () => {
    await close?.();
    await api?.close();
  });

  it('answers 500 INTERNAL without the message or stack, and logs them with the request id', async () => {
    const res = await fetch(`${base}/v1/boom`);
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(text).not.toContain('secret');
    expect(text).not.toContain('/srv/');
    const body = JSON.parse(text) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe('INTERNAL');
    expect(body.error.request_id).toBe(res.headers.get('x-request-id'));
    expect(logged.join('')).toContain('secret detail');
    expect(logged.join('')).toContain(body.error.request_id);
  });

  /** The raw answer to raw request bytes. */
  function exchange(request: string): Promise<string> {
    const { port } = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
      let text = '';
      socket.on('data', (chunk) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
  }

  // Found by fuzzing: a path over Node's 16 KiB header limit got Node's bare 431, no body, no request id.
  it.each([
    ['a request line over the header limit', `GET /v1/boom?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 'too_big'],
    ['bytes that are not HTTP', 'NOT HTTP AT ALL\r\n\r\n', 'invalid_format'],
  ])('answers %s 400 VALIDATION in the error format, with the request id', async (_what, request, code) => {
    const text = await exchange(request);
    const [head, body] = text.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    const requestId = /^x-request-id: (\S+)$/im.exec(head)?.[1];
    expect(requestId).toMatch(/^req_[0-9a-f]+$/);
    expect(JSON.parse(body)).toEqual({
      error: { code: 'VALIDATION', message: expect.stringMatching(/\S/), request_id: requestId, details: { issues: [expect.objectContaining({ path: 'request', code })] } },
    });
  });
});
