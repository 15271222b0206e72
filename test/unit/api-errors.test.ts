import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApi, type Api } from '../../api/app.ts';
import { defineRoute } from '../../api/http/route.ts';
import { pino } from 'pino';

/** What a failure inside a handler looks like from outside: INTERNAL, the request id, no internals. */
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
    api = createApi({ log: {} as never, store: {} as never, logger, startedAt: 0, extraRoutes: [boom] });
    const server = api.app.listen(0, '127.0.0.1');
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
});
