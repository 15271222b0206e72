import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiWorld, type ApiWorld } from '../helpers/api-world.ts';
import { ROOT } from '../helpers/project-files.ts';

/**
 * The package's exports as a user gets them: built by `npm run build`, imported by their
 * package names from plain Node (no TypeScript loader), and the typed client calling a real
 * service whose answers it must equal.
 */

const run = promisify(execFile);
let world: ApiWorld;

beforeAll(async () => {
  await run('npm', ['run', 'build'], { cwd: ROOT });
  world = await startApiWorld();
}, 600_000);

afterAll(async () => {
  await world?.stop();
});

/** Runs an ES module in plain Node from the package's folder; returns what it prints as JSON. */
async function inPlainNode(source: string): Promise<any> {
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', source], { cwd: ROOT });
  return JSON.parse(stdout);
}

describe('the built package', () => {
  it('serves the typed client: its answers are the API\'s, and an error carries its code and request id', async () => {
    const token = (await world.request('GET', '/v1/quant/tokens?limit=1')).body.data[0].token_id as string;
    const printed = await inPlainNode(`
      import { createClient, unwrap, ApiRequestError } from 'token-quant-analytics/client';
      const api = createClient({ baseUrl: ${JSON.stringify(world.base)}, key: ${JSON.stringify(world.keys.pro)} });
      const key = unwrap(await api.GET('/v1/key'));
      const history = unwrap(await api.GET('/v1/quant/token/{token}/history', { params: { path: { token: ${JSON.stringify(token)} }, query: { step: '1d' } } }));
      let error;
      try { unwrap(await api.GET('/v1/quant/token/{token}', { params: { path: { token: 'tk_noSuchToken' } } })); }
      catch (e) { error = { isApiError: e instanceof ApiRequestError, status: e.status, code: e.code, requestId: e.requestId }; }
      console.log(JSON.stringify({ key, history, error }));
    `);
    expect(printed.key).toEqual((await world.request('GET', '/v1/key', { key: world.keys.pro })).body);
    expect(printed.history).toEqual((await world.request('GET', `/v1/quant/token/${token}/history?step=1d`, { key: world.keys.pro })).body);
    expect(printed.error).toEqual({ isApiError: true, status: 404, code: 'NOT_FOUND', requestId: expect.stringMatching(/^req_/) });
  });

  it('exports the webhook verifier and the stream client beside it, the old names too', async () => {
    const printed = await inPlainNode(`
      import { signatureHeader, verifyWebhook, WebhookVerificationError } from 'token-quant-analytics/webhooks';
      import * as old from 'token-quant-analytics/verify-webhook';
      import * as stream from 'token-quant-analytics/stream';
      import * as oldStream from 'token-quant-analytics/stream-client';
      const body = JSON.stringify({ id: 'ev_1', type: 'webhook.test' });
      const t = Math.floor(Date.now() / 1000);
      const header = signatureHeader(['whsec_test'], t, body);
      const verified = verifyWebhook({ payload: body, header, secret: 'whsec_test' });
      let refused = false;
      try { verifyWebhook({ payload: body + ' ', header, secret: 'whsec_test' }); } catch (e) { refused = e instanceof WebhookVerificationError; }
      console.log(JSON.stringify({ verified, refused, same: old.verifyWebhook === verifyWebhook, stream: Object.keys(stream).sort(), oldStream: Object.keys(oldStream).sort() }));
    `);
    expect(printed).toMatchObject({ verified: { id: 'ev_1', type: 'webhook.test' }, refused: true, same: true });
    expect(printed.stream).toContain('connectStream');
    expect(printed.oldStream).toEqual(printed.stream);
  });
});
