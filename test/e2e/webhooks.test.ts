import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../api/app.ts';
import { SCOPE_NAMES } from '../../api/scopes.ts';
import { appendEvent } from '../../projections/control-events.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { teamsCommand } from '../../cli/commands/teams.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { columns, sql, table } from '../../infra/store/sql-literal.ts';
import { openStore } from '../../projections/open-store.ts';
import { startProjections, type ProjectionSet } from '../../projections/runtime/runner.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { webhooks } from '../../projections/tables/webhooks.ts';
import { webhookDeliveriesProjection, webhooksProjection } from '../../projections/webhooks.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { PublicEvent } from '../../schemas/records.ts';
import { Dispatcher, ROTATION_OVERLAP_MS } from '../../webhooks/delivery/dispatcher.ts';
import { RETRY_DELAYS_MS } from '../../webhooks/delivery/schedule.ts';
import { SecretBox } from '../../webhooks/secret-box.ts';
import { postSigned } from '../../webhooks/sender.ts';
import { verifyWebhook } from '../../webhooks/signature.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { runCommand } from '../helpers/cli.ts';
import { waitFor } from '../../infra/wait.ts';
import { selfSignedCertificate, WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * Webhooks end to end through real sockets: the API on loopback, a real HTTPS receiver with
 * a self-signed certificate the sender is told to trust, the development setting on (loopback
 * receivers, any port), the live projections and the delivery dispatcher on one clock the
 * test moves.
 */

const T0 = Date.UTC(2026, 5, 1);
let now = T0;
let dir: string;
let config: Config;
let log: FileEventLog;
let codec: Codec;
let store: AnalyticalStore<ProjectionTables>;
let projections: ProjectionSet;
let api: Api;
let server: Server;
let base: string;
let receiver: WebhookReceiver;
let dispatcher: Dispatcher;
let ca: string;
let key: string;
const secrets = new SecretBox(randomBytes(32));
const policy = { allowPrivate: true };

function startDispatcher(): Dispatcher {
  const d = new Dispatcher({ log, codec, logger: silentLogger, secrets, policy, ca, now: () => now, tickMs: 20 });
  void d.start();
  return d;
}

async function request(method: string, path: string, body?: unknown, asKey = key) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${asKey}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** A key made with `tqa keys create`, which works as soon as the command returns. */
async function createKey(plan: string, scopes: readonly string[], ...more: string[]): Promise<{ id: string; key: string }> {
  return JSON.parse(await runCommand(keysCommand, config, ['create', '--plan', plan, '--scopes', scopes.join(','), '--name', 'hooks', '--json', ...more])) as { id: string; key: string };
}

async function createTeam(name: string): Promise<string> {
  return (JSON.parse(await runCommand(teamsCommand, config, ['create', '--name', name, '--json'])) as { id: string }).id;
}

let seq = 0;
/** Appends a public event as the public-events processor would, at the test clock's time. */
async function publish(type: PublicEvent['type'] = 'signal.created', tokenId = 'tk_a', audience: Pick<PublicEvent, 'ownerKeyId' | 'teamId'> = { ownerKeyId: null, teamId: null }): Promise<PublicEvent> {
  const event: PublicEvent = {
    eventId: `ev_${(++seq).toString(16).padStart(24, '0')}`,
    type,
    ts: now,
    dataset: 'live',
    tokenId,
    ...audience,
    data: JSON.stringify({ object: 'signal', id: `sig_${seq}`, token: { id: tokenId } }),
  };
  await appendEvent(log, codec, TOPICS.publicEvents.name, tokenId, event);
  return event;
}

async function register(path: string, events = ['signal.created'], asKey = key): Promise<{ id: string; secret: string }> {
  const res = await request('POST', '/v1/webhooks', { url: receiver.url(path), events }, asKey);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function deliveries(id: string): Promise<any[]> {
  const res = await request('GET', `/v1/webhooks/${id}/deliveries?limit=100`);
  expect(res.status).toBe(200);
  return res.body.data;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-webhooks-'));
  config = loadConfig({ TQA_DATA_DIR: dir, TQA_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  ({ log, codec } = await openEmbedded(dir));
  store = await openStore(config, silentLogger);
  projections = startProjections([webhooksProjection, webhookDeliveriesProjection], {
    log,
    codec,
    store,
    logger: silentLogger,
    deadLetters: 'produce',
  });
  const tls = selfSignedCertificate();
  ca = tls.cert;
  receiver = await WebhookReceiver.start(tls);
  api = createApi({ log, codec, store, startedAt: T0, logger: silentLogger, now: () => now, webhooks: { codec, secrets, policy, ca } });
  server = api.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ key } = await createKey('team', SCOPE_NAMES));
  dispatcher = startDispatcher();
});

afterAll(async () => {
  await dispatcher?.stop();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await api?.close();
  await receiver?.stop();
  await projections?.stop();
  await store?.close();
  await log?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('webhook registration', () => {
  it('returns the secret once, shows the webhook at once, and never keeps the secret in clear', async () => {
    const created = await register('/registered');
    expect(created).toMatchObject({ object: 'webhook', url: receiver.url('/registered'), events: ['signal.created'], status: 'enabled', consecutive_failures: 0 });
    expect(created.secret).toMatch(/^whsec_/);
    const list = await request('GET', '/v1/webhooks');
    const listed = list.body.data.find((w: any) => w.id === created.id);
    expect(listed).toBeDefined();
    expect(listed.secret).toBeUndefined();
    const logged = (await readTopic(log, TOPICS.webhooks.name)).map((r) => r.value!.toString('latin1')).join('');
    expect(logged).toContain(created.id);
    expect(logged).not.toContain(created.secret);
    const rows = await store.query(sql`SELECT ${columns(webhooks)} FROM ${table(webhooks)}`);
    expect(JSON.stringify(rows)).not.toContain(created.secret);
    const removed = await request('DELETE', `/v1/webhooks/${created.id}`);
    expect(removed).toMatchObject({ status: 200, body: { object: 'webhook', id: created.id, deleted: true } });
    expect((await request('GET', '/v1/webhooks')).body.data.map((w: any) => w.id)).not.toContain(created.id);
    expect((await request('DELETE', `/v1/webhooks/${created.id}`)).body.error.code).toBe('NOT_FOUND');
  });

  it('delivers a manual cohort\'s events to its owner and, when shared, to its team, and to no other key', async () => {
    const desk = await createTeam('desk');
    const owner = await createKey('team', SCOPE_NAMES, '--team', desk);
    const mate = await createKey('team', SCOPE_NAMES, '--team', desk);
    const other = await createKey('team', SCOPE_NAMES);
    const hooks = [
      await register('/cohort-owner', ['cohort.convergence'], owner.key),
      await register('/cohort-mate', ['cohort.convergence'], mate.key),
      await register('/cohort-other', ['cohort.convergence'], other.key),
    ];
    const kept = await publish('cohort.convergence', 'tk_a', { ownerKeyId: owner.id, teamId: null });
    const shared = await publish('cohort.convergence', 'tk_a', { ownerKeyId: owner.id, teamId: desk });
    const everyone = await publish('cohort.convergence', 'tk_a');
    const ids = (path: string) => receiver.to(path).map((r) => (JSON.parse(r.body) as { id: string }).id);
    // The auto cohort's event, published last, reaches every webhook: then nothing else is on its way.
    for (const path of ['/cohort-owner', '/cohort-mate', '/cohort-other']) await waitFor(() => ids(path).includes(everyone.eventId), `${path} delivered`);
    expect(ids('/cohort-owner').sort()).toEqual([kept.eventId, shared.eventId, everyone.eventId].sort());
    expect(ids('/cohort-mate').sort()).toEqual([shared.eventId, everyone.eventId].sort());
    expect(ids('/cohort-other')).toEqual([everyone.eventId]);
    for (const [i, hook] of hooks.entries()) await request('DELETE', `/v1/webhooks/${hook.id}`, undefined, [owner, mate, other][i].key);
  });

  it('answers every refusal in the error format of spec 7', async () => {
    const cases: [unknown, number, string, string | null][] = [
      [{ events: ['signal.created'] }, 400, 'VALIDATION', 'body.url'],
      [{ url: 'ftp://127.0.0.1/x', events: ['signal.created'] }, 400, 'VALIDATION', 'body.url'],
      [{ url: 'https://user:pw@127.0.0.1/x', events: ['signal.created'] }, 400, 'VALIDATION', 'body.url'],
      [{ url: receiver.url('/x'), events: ['narrative.shift'] }, 400, 'VALIDATION', 'body.events[0]'],
      [{ url: receiver.url('/x'), events: [] }, 400, 'VALIDATION', 'body.events'],
      [{ url: receiver.url('/x'), events: ['signal.created', 'signal.created'] }, 400, 'VALIDATION', 'body.events'],
      [{ url: receiver.url('/x'), events: ['signal.created'], extra: 1 }, 400, 'VALIDATION', null],
    ];
    for (const [body, status, code, path] of cases) {
      const res = await request('POST', '/v1/webhooks', body);
      expect({ status: res.status, code: res.body.error.code }, JSON.stringify(body)).toEqual({ status, code });
      expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
      if (path !== null) expect(res.body.error.details.issues.map((i: any) => i.path)).toContain(path);
    }
    const readOnly = await createKey('team', ['webhooks:read']);
    expect((await request('POST', '/v1/webhooks', { url: receiver.url('/x'), events: ['signal.created'] }, readOnly.key)).body.error.code).toBe('FORBIDDEN');
    expect((await request('GET', '/v1/webhooks/wh_000000000000000000000000')).status).toBe(404);
    expect((await request('GET', '/v1/webhooks/nope/deliveries')).body.error.code).toBe('VALIDATION');
  });

  it('refuses a registration above the plan quota with 409 LIMIT_REACHED', async () => {
    const free = await createKey('free', SCOPE_NAMES);
    for (let i = 0; i < 2; i++) {
      expect((await request('POST', '/v1/webhooks', { url: receiver.url(`/free${i}`), events: ['signal.created'] }, free.key)).status).toBe(201);
    }
    const third = await request('POST', '/v1/webhooks', { url: receiver.url('/free2'), events: ['signal.created'] }, free.key);
    expect({ status: third.status, code: third.body.error.code }).toEqual({ status: 409, code: 'LIMIT_REACHED' });
  });

  it('refuses private receivers without the development setting', async () => {
    const strict = createApi({ log, codec, store, startedAt: T0, logger: silentLogger, now: () => now, webhooks: { codec, secrets, policy: { allowPrivate: false } } });
    const s = strict.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => s.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(s.address() as AddressInfo).port}/v1/webhooks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: receiver.url('/private'), events: ['signal.created'] }),
      });
      const body = (await res.json()) as any;
      expect(res.status).toBe(400);
      expect(body.error.details.issues[0]).toMatchObject({ path: 'body.url' });
    } finally {
      await new Promise<void>((resolve) => s.close(() => resolve()));
      await strict.close();
    }
  });
});

describe('webhook delivery', () => {
  it('delivers a public event signed, verifiable with the exported verifier, and lists the attempt', async () => {
    const hook = await register('/ok');
    const event = await publish();
    const [got] = await waitFor(() => receiver.to('/ok').length > 0 && receiver.to('/ok'), 'the delivery');
    const verified = verifyWebhook({ payload: got.body, header: got.headers['service-signature'] as string, secret: hook.secret, now: Math.floor(now / 1000) });
    expect(verified).toEqual({
      id: event.eventId,
      object: 'event',
      type: 'signal.created',
      created_at: new Date(event.ts).toISOString(),
      dataset: 'live',
      livemode: true,
      data: JSON.parse(event.data),
    });
    expect(got.headers['service-event']).toBe('signal.created');
    expect(got.headers['service-delivery']).toMatch(/^whd_[0-9a-f]+$/);
    expect(got.headers['content-type']).toBe('application/json; charset=utf-8');
    const attempts = await waitFor(async () => {
      const d = await deliveries(hook.id);
      return d.length > 0 && d;
    }, 'the attempt listed');
    expect(attempts[0]).toMatchObject({ id: got.headers['service-delivery'], event_id: event.eventId, attempt: 1, outcome: 'delivered', http_status: 200, next_retry_at: null, test: false });
    await request('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('retries a failing receiver on the schedule 30 s, 2 m, 10 m, 30 m, 2 h, 6 h, then gives the event up', async () => {
    receiver.answer('/down', { status: 503 });
    const hook = await register('/down');
    const event = await publish();
    for (let attempt = 1; attempt <= RETRY_DELAYS_MS.length + 1; attempt++) {
      const listed = await waitFor(async () => {
        const d = await deliveries(hook.id);
        return d.length === attempt && d;
      }, `attempt ${attempt}`);
      const last = listed[0];
      expect(last).toMatchObject({ attempt, outcome: 'failed', http_status: 503 });
      const delay = RETRY_DELAYS_MS[attempt - 1];
      expect(last.next_retry_at).toBe(delay === undefined ? null : new Date(Date.parse(last.at) + delay).toISOString());
      if (delay === undefined) break;
      // Not yet due: a tick one millisecond early sends nothing; then due.
      now = Date.parse(last.at) + delay - 1;
      await dispatcher.tick();
      expect(receiver.to('/down')).toHaveLength(attempt);
      now += 1;
      await dispatcher.tick();
    }
    expect(receiver.to('/down')).toHaveLength(RETRY_DELAYS_MS.length + 1);
    expect(new Set(receiver.to('/down').map((r) => r.headers['service-delivery'])).size).toBe(RETRY_DELAYS_MS.length + 1);
    // A resend of the given-up event starts a new series of retries.
    expect((await request('POST', `/v1/webhooks/${hook.id}/resend`, { event_id: event.eventId })).status).toBe(202);
    const [resent] = await waitFor(async () => {
      const d = await deliveries(hook.id);
      return d.length === RETRY_DELAYS_MS.length + 2 && d;
    }, 'the resent attempt');
    expect(resent).toMatchObject({ attempt: RETRY_DELAYS_MS.length + 2, outcome: 'failed' });
    expect(resent.next_retry_at).toBe(new Date(Date.parse(resent.at) + RETRY_DELAYS_MS[0]).toISOString());
    now = Date.parse(resent.next_retry_at);
    await dispatcher.tick();
    const [retried] = await waitFor(async () => {
      const d = await deliveries(hook.id);
      return d.length === RETRY_DELAYS_MS.length + 3 && d;
    }, 'the resent event retried');
    expect(retried.next_retry_at).toBe(new Date(Date.parse(retried.at) + RETRY_DELAYS_MS[1]).toISOString());
    await request('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('never follows a redirect', async () => {
    receiver.answer('/moved', { status: 302, headers: { location: '/elsewhere' } });
    const hook = await register('/moved');
    await publish();
    const [attempt] = await waitFor(async () => {
      const d = await deliveries(hook.id);
      return d.length > 0 && d;
    }, 'the attempt');
    expect(attempt).toMatchObject({ outcome: 'failed', http_status: 302 });
    expect(attempt.error).toContain('redirects are not followed');
    expect(receiver.to('/elsewhere')).toHaveLength(0);
    await request('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('disables a webhook after 20 consecutive failures, tests not counted, and re-enables it', async () => {
    receiver.answer('/flaky', { status: 500 });
    const hook = await register('/flaky');
    for (let i = 1; i <= 19; i++) await publish('signal.created', `tk_f${i}`);
    await waitFor(async () => (await request('GET', '/v1/webhooks')).body.data.find((w: any) => w.id === hook.id).consecutive_failures === 19, '19 failures');
    const test = await request('POST', `/v1/webhooks/${hook.id}/test`);
    expect(test).toMatchObject({ status: 200, body: { object: 'webhook_test', delivered: false, http_status: 500 } });
    const sent = receiver.to('/flaky').at(-1)!;
    expect(sent.headers['service-event']).toBe('webhook.test');
    expect(verifyWebhook({ payload: sent.body, header: sent.headers['service-signature'] as string, secret: hook.secret, now: Math.floor(now / 1000) })).toMatchObject({ type: 'webhook.test' });
    const after = (await request('GET', '/v1/webhooks')).body.data.find((w: any) => w.id === hook.id);
    expect(after).toMatchObject({ status: 'enabled', consecutive_failures: 19 });

    await publish('signal.created', 'tk_f20');
    const disabled = await waitFor(async () => {
      const w = (await request('GET', '/v1/webhooks')).body.data.find((x: any) => x.id === hook.id);
      return w.status === 'disabled' && w;
    }, 'auto-disable');
    expect(disabled.disabled_reason).toContain('20 consecutive failed deliveries');
    expect(disabled.disabled_at).toEqual(expect.any(String));

    receiver.answer('/flaky', { status: 200 });
    now += 1000;
    const enabled = await request('POST', `/v1/webhooks/${hook.id}/enable`);
    expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null, consecutive_failures: 0 });
    const event = await publish('signal.created', 'tk_f21');
    await waitFor(() => receiver.to('/flaky').some((r) => JSON.parse(r.body).id === event.eventId), 'delivery after re-enable');
    await request('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('rotates the secret: deliveries verify with either secret for 24 hours, then with the new one only', async () => {
    const hook = await register('/rotating');
    const rotated = await request('POST', `/v1/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const verifies = (got: { body: string; headers: Record<string, unknown> }, secret: string) => {
      const header = got.headers['service-signature'] as string;
      try {
        return verifyWebhook({ payload: got.body, header, secret, now: Math.floor(now / 1000) }) !== undefined;
      } catch {
        return false;
      }
    };

    await publish('signal.created', 'tk_r1');
    const during = await waitFor(() => receiver.to('/rotating')[0], 'the delivery during the overlap');
    expect([verifies(during, rotated.body.secret), verifies(during, hook.secret)]).toEqual([true, true]);

    now += ROTATION_OVERLAP_MS;
    await publish('signal.created', 'tk_r2');
    const after = await waitFor(() => receiver.to('/rotating')[1], 'the delivery after the overlap');
    expect([verifies(after, rotated.body.secret), verifies(after, hook.secret)]).toEqual([true, false]);
    await request('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('sends one event, or every event since a time, again on request', async () => {
    const hook = await register('/resend');
    const a = await publish('signal.created', 'tk_s1');
    now += 1000;
    const b = await publish('signal.created', 'tk_s2');
    await waitFor(() => receiver.to('/resend').length === 2, 'first deliveries');
    const one = await request('POST', `/v1/webhooks/${hook.id}/resend`, { event_id: a.eventId });
    expect(one).toMatchObject({ status: 202, body: { object: 'webhook_resend', event_id: a.eventId, since: null } });
    await waitFor(() => receiver.to('/resend').length === 3, 'the resent event');
    expect(JSON.parse(receiver.to('/resend')[2].body).id).toBe(a.eventId);
    const since = await request('POST', `/v1/webhooks/${hook.id}/resend`, { since: new Date(b.ts).toISOString() });
    expect(since.status).toBe(202);
    await waitFor(() => receiver.to('/resend').length === 4, 'the events since');
    expect(JSON.parse(receiver.to('/resend')[3].body).id).toBe(b.eventId);
    const attempts = await waitFor(async () => {
      const d = await deliveries(hook.id);
      return d.length === 4 && d;
    }, 'every attempt listed');
    expect(attempts.map((d: any) => [d.event_id, d.attempt]).sort()).toEqual([[a.eventId, 1], [a.eventId, 2], [b.eventId, 1], [b.eventId, 2]].sort());
    const bad = await request('POST', `/v1/webhooks/${hook.id}/resend`, { event_id: a.eventId, since: new Date(b.ts).toISOString() });
    expect({ status: bad.status, code: bad.body.error.code }).toEqual({ status: 400, code: 'VALIDATION' });
    await request('DELETE', `/v1/webhooks/${hook.id}`);
  });

  it('sends nothing again after a restart of the dispatcher, and loses nothing', async () => {
    const hook = await register('/restart');
    const first = await publish('signal.created', 'tk_r');
    await waitFor(() => receiver.to('/restart').length === 1, 'first delivery');
    await waitFor(async () => (await deliveries(hook.id)).length === 1, 'first attempt recorded');
    await dispatcher.stop();
    const whileDown = await publish('signal.created', 'tk_r');
    dispatcher = startDispatcher();
    const after = await publish('signal.created', 'tk_r');
    // Same key, same partition: once `after` arrived, the events before it were read again too.
    await waitFor(() => receiver.to('/restart').some((r) => JSON.parse(r.body).id === after.eventId), 'delivery after restart');
    expect(receiver.to('/restart').map((r) => JSON.parse(r.body).id)).toEqual([first.eventId, whileDown.eventId, after.eventId]);
    await request('DELETE', `/v1/webhooks/${hook.id}`);
  });
});

describe('webhook sender', () => {
  it('refuses a name that resolved to a public address at registration and resolves to loopback at delivery', async () => {
    let answers = ['93.184.216.34'];
    const resolve = async () => answers;
    const strict = { allowPrivate: false };
    const guarded = createApi({ log, codec, store, startedAt: T0, logger: silentLogger, now: () => now, webhooks: { codec, secrets, policy: strict, resolve } });
    const s = guarded.app.listen(0, '127.0.0.1');
    await new Promise<void>((ready) => s.once('listening', ready));
    try {
      const res = await fetch(`http://127.0.0.1:${(s.address() as AddressInfo).port}/v1/webhooks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: 'https://hooks.example.com/in', events: ['signal.created'] }),
      });
      expect(res.status).toBe(201);
      const { id } = (await res.json()) as { id: string };
      await fetch(`http://127.0.0.1:${(s.address() as AddressInfo).port}/v1/webhooks/${id}`, { method: 'DELETE', headers: { Authorization: `Bearer ${key}` } });
    } finally {
      await new Promise<void>((done) => s.close(() => done()));
      await guarded.close();
    }
    answers = ['127.0.0.1'];
    const before = receiver.requests.length;
    const result = await postSigned('https://hooks.example.com/in', '{}', {}, { policy: strict, resolve, ca });
    expect(result).toMatchObject({ delivered: false, status: null, error: expect.stringContaining('loopback') });
    expect(receiver.requests.length).toBe(before);
  });

  it('gives up on a receiver that does not answer within the time limit', async () => {
    receiver.answer('/hang', 'hang');
    const result = await postSigned(receiver.url('/hang'), '{}', {}, { policy, ca, timeoutMs: 200 });
    expect(result).toMatchObject({ delivered: false, status: null, error: 'no answer within 0.2 s' });
    expect(receiver.to('/hang')).toHaveLength(1);
  });
});
