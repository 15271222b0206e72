import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket, type ClientOptions } from 'ws';
import { createApi } from '../../api/app.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { streamRole } from '../../cli/roles/stream.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { LocalSchemaRegistry } from '../../infra/registry/local.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { PublicEvent } from '../../schemas/records.ts';
import { RESUME_WINDOW_MS } from '../../stream/catch-up.ts';
import { decodeCursor, encodeCursor } from '../../stream/cursor.ts';
import { StreamDirectory } from '../../api/stream-presence.ts';
import { startStreamServer, type StreamServer } from '../../stream/server.ts';
import { runCommand } from '../helpers/cli.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';
import { waitFor } from '../../infra/wait.ts';
import { Client, openStreamWorld, publicEvent, type StreamWorld } from './stream-world.ts';

/**
 * The WebSocket stream end to end through real sockets: the stream server on loopback fed
 * by public.events of an embedded log, keys and tokens applied by their live projections,
 * clients of the `ws` package.
 */

let world: StreamWorld;
let config: Config;
let log: FileEventLog;
let codec: Codec;
let store: AnalyticalStore<ProjectionTables>;
let server: StreamServer;
let url: string;
let key: { id: string; key: string };

const createKey = (scopes: readonly string[]) => world.createKey(scopes);
const publish = (...events: PublicEvent[]) => world.publish(...events);

/** A client of this file's server with this file's key, unless told otherwise. */
const open = (as: string | null = key.key, options: ClientOptions = {}, query = '', at = url): Promise<Client> => Client.open(at, as, options, query);

/** The refusal of an upgrade: its HTTP status and body. */
function refused(headers: Record<string, string>, query = ''): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url + query, { headers });
    socket.once('open', () => reject(new Error('the upgrade was accepted')));
    socket.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
  });
}

beforeAll(async () => {
  world = await openStreamWorld();
  ({ config, log, codec, store } = world);
  server = await startStreamServer({ log, codec, store, logger: silentLogger, port: 0, host: '127.0.0.1', pingIntervalMs: 300, keyCheckMs: 100, maxBufferedBytes: 2 * 1024 * 1024, pollMs: 10 });
  url = `ws://127.0.0.1:${server.port}/v1/stream`;
  key = await createKey(['stream:read']);
});

afterAll(async () => {
  await server?.stop();
  await world?.close();
});

describe('authentication before the upgrade', () => {
  it('refuses a missing, unknown or malformed key with 401 and a key without stream:read with 403, with the error body', async () => {
    const missing = await refused({});
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatchObject({ code: 'UNAUTHORIZED', request_id: expect.stringMatching(/^req_[0-9a-f]+$/) });
    const unknown = await refused({ Authorization: `Bearer svc_live_${'A'.repeat(43)}` });
    expect([unknown.status, unknown.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const viaQuery = await refused({}, '?key=nonsense');
    expect([viaQuery.status, viaQuery.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    const noScope = await createKey(['quant:read']);
    const forbidden = await refused({ 'x-api-key': noScope.key });
    expect([forbidden.status, forbidden.body.error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('accepts the key in ?key= and in x-api-key, and welcomes with the connection, limits and key', async () => {
    const viaQuery = await open(null, {}, `?key=${key.key}`);
    const welcome = viaQuery.of('welcome')[0];
    expect(welcome).toMatchObject({
      connection_id: expect.stringMatching(/^conn_[0-9a-f]+$/),
      request_id: expect.stringMatching(/^req_[0-9a-f]+$/),
      dataset: 'live',
      livemode: true,
      events: ['signal.created', 'signal.ended', 'score.updated', 'cohort.convergence', 'narrative.shift'],
      limits: { max_subscriptions: 20, max_tokens_per_subscription: 100 },
      key: { id: key.id, name: 'stream test' },
    });
    viaQuery.close();
    const viaHeader = await open(null, { headers: { 'x-api-key': key.key } });
    viaHeader.close();
  });

  it('refuses the 11th connection of a key with 409 LIMIT_REACHED', async () => {
    const own = await createKey(['stream:read']);
    const ten = await Promise.all(Array.from({ length: 10 }, () => open(own.key)));
    const eleventh = await refused({ Authorization: `Bearer ${own.key}` });
    expect([eleventh.status, eleventh.body.error.code]).toEqual([409, 'LIMIT_REACHED']);
    for (const c of ten) c.close();
  });
});

describe('protocol', () => {
  it('subscribes with resolved tokens, answers ping with pong, and unsubscribes', async () => {
    const c = await open();
    const subscribed = await c.subscribe(['signal.created'], ['$alpha', 'tk_beta']);
    expect(subscribed).toMatchObject({
      type: 'subscribed',
      subscription_id: expect.stringMatching(/^sub_[0-9a-f]+$/),
      events: ['signal.created'],
      tokens: [
        { token_id: 'tk_alpha', symbol: 'ALPHA' },
        { token_id: 'tk_beta', symbol: 'BETA' },
      ],
    });
    c.send({ type: 'ping' });
    expect((await c.next((f) => f.type === 'pong')).ts).toEqual(expect.any(String));
    c.send({ type: 'unsubscribe', subscription_id: subscribed.subscription_id });
    await c.next((f) => f.type === 'unsubscribed' && f.subscription_id === subscribed.subscription_id);
    c.send({ type: 'unsubscribe', subscription_id: subscribed.subscription_id });
    expect((await c.next((f) => f.type === 'error')).code).toBe('NOT_FOUND');
    c.close();
  });

  it('delivers events by type and token; token-less events reach every subscription of their type; a manual cohort only its owner', async () => {
    const alpha = await open();
    await alpha.subscribe(['signal.created', 'narrative.shift', 'cohort.convergence'], ['$ALPHA']);
    const scores = await open();
    await scores.subscribe(['score.updated']);
    const other = await createKey(['stream:read']);
    const owner = await open(other.key);
    await owner.subscribe(['cohort.convergence']);
    const events = [
      publicEvent('signal.created', 'tk_alpha'),
      publicEvent('signal.created', 'tk_beta'),
      publicEvent('token.score.updated', 'tk_beta'),
      publicEvent('narrative.shift', null),
      publicEvent('cohort.convergence', 'tk_alpha', { ownerKeyId: other.id }),
      publicEvent('cohort.convergence', 'tk_alpha'),
      publicEvent('signal.ended', 'tk_alpha'),
    ];
    await publish(...events);
    const ids = (c: Client) => c.of('event').map((f) => f.id);
    await waitFor(() => ids(alpha).length === 3 && ids(scores).length === 1 && ids(owner).length === 2, 'the events');
    expect(ids(alpha)).toEqual([events[0].eventId, events[3].eventId, events[5].eventId]);
    expect(ids(owner)).toEqual([events[4].eventId, events[5].eventId]);
    const score = scores.of('event')[0];
    expect(score).toEqual({
      type: 'event',
      id: events[2].eventId,
      event: 'score.updated',
      created_at: new Date(events[2].ts).toISOString(),
      dataset: 'live',
      cursor: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      data: JSON.parse(events[2].data),
    });
    // A later event proves nothing else was on its way.
    const marker = publicEvent('signal.created', 'tk_alpha');
    await publish(marker);
    await alpha.next((f) => f.id === marker.eventId);
    expect(ids(alpha)).toHaveLength(4);
    expect(ids(scores)).toHaveLength(1);
    for (const c of [alpha, scores, owner]) c.close();
  });

  it('answers malformed frames, unknown events and tokens, 101 tokens and a 21st subscription with VALIDATION', async () => {
    const c = await open();
    const errors = () => c.of('error');
    c.send('not json');
    c.send({ type: 'subscribe', id: 'a', events: ['price.moved'] });
    c.send({ type: 'subscribe', id: 'b', events: ['signal.created'], tokens: Array.from({ length: 101 }, (_, i) => `tk_t${i}`) });
    c.send({ type: 'subscribe', id: 'c', events: ['signal.created'], tokens: ['$NOPE'] });
    await waitFor(() => errors().length === 4, 'four errors');
    for (const e of errors()) {
      expect(e.code).toBe('VALIDATION');
      expect(e.details.issues.length).toBeGreaterThan(0);
    }
    expect(errors()[1].details.issues[0].path).toBe('body.events[0]');
    expect(errors()[2].details.issues[0].path).toBe('body.tokens');
    expect(errors()[3]).toMatchObject({ ref: 'c', details: { issues: [{ path: 'body.tokens[0]', code: 'unknown_token' }] } });
    for (let i = 0; i < 20; i++) await c.subscribe(['signal.created']);
    const refusedSub = await c.subscribe(['signal.created']);
    expect(refusedSub).toMatchObject({ type: 'error', code: 'VALIDATION', details: { issues: [{ code: 'too_many_subscriptions' }] } });
    c.close();
  });

  it('answers the 31st message within 10 s with RATE_LIMITED and ignores it', async () => {
    const c = await open();
    for (let i = 0; i < 31; i++) c.send({ type: 'ping' });
    await c.next((f) => f.type === 'error');
    expect(c.of('error')).toEqual([expect.objectContaining({ code: 'RATE_LIMITED' })]);
    await waitFor(() => c.of('pong').length === 30, '30 pongs');
    c.close();
  });
});

describe('resuming from a cursor', () => {
  const ids = (c: Client) => c.ids();
  const tokenOf = new Map<string, string | null>();
  const batch = (n: number) =>
    Array.from({ length: n }, (_, i) => {
      const e = i % 3 === 2 ? publicEvent('token.score.updated', i % 2 ? 'tk_beta' : 'tk_alpha') : publicEvent('signal.created', ['tk_alpha', 'tk_beta'][i % 2]);
      tokenOf.set(e.eventId, e.tokenId);
      return e;
    });
  /** Ids per token: the order within one partition of public.events, which a resume keeps. */
  const perToken = (list: string[]) => {
    const out: Record<string, string[]> = {};
    for (const id of list) (out[tokenOf.get(id) ?? 'none'] ??= []).push(id);
    return out;
  };

  it('sends what a reconnecting client missed, then the live flow, with no gap and no duplicate, in log order per partition', async () => {
    const steady = await open();
    await steady.subscribe(['signal.created', 'score.updated']);
    const first = await open();
    await first.subscribe(['signal.created', 'score.updated']);
    const before = batch(30);
    await publish(...before.slice(0, 10));
    await publish(...before.slice(10));
    await waitFor(() => ids(first).length === before.length, 'the first events');
    const cursor = first.of('event').at(-1).cursor as string;
    first.close();
    await waitFor(() => first.closed ?? undefined, 'the first connection closed');

    const missed = batch(40);
    await publish(...missed.slice(0, 25));
    await publish(...missed.slice(25));
    const second = await open();
    second.send({ type: 'subscribe', id: 'again', events: ['signal.created', 'score.updated'], resume: cursor });
    // More events while it catches up: catching up races the live flow.
    const after = batch(30);
    for (let i = 0; i < after.length; i += 5) await publish(...after.slice(i, i + 5));
    const all = [...before, ...missed, ...after];
    await waitFor(() => ids(steady).length === all.length, 'every event at the steady client');
    await waitFor(() => ids(first).length + ids(second).length >= all.length, 'every event across the two connections');
    expect(second.of('subscribed').map((f) => f.ref)).toEqual(['again']);
    expect(second.of('error')).toEqual([]);

    const resumed = [...ids(first), ...ids(second)];
    expect(new Set(resumed).size).toBe(resumed.length);
    expect([...resumed].sort()).toEqual([...ids(steady)].sort());
    // Tokens are partition keys: per token, the very sequence the steady client got.
    expect(perToken(resumed)).toEqual(perToken(ids(steady)));
    // A later event proves nothing else was on its way.
    const marker = publicEvent('signal.created', 'tk_alpha');
    await publish(marker);
    await second.next((f) => f.id === marker.eventId);
    expect(ids(second)).toHaveLength(all.length - ids(first).length + 1);
    for (const c of [steady, second]) c.close();
  });

  it('resumes a subscription from an older cursor next to a live one: only what nobody sent; a cursor taken meanwhile resumes both', async () => {
    const alphaFilter = [['signal.created', 'score.updated'], ['$ALPHA']] as const;
    const scoresOnly = (list: PublicEvent[]) => list.filter((e) => e.type === 'token.score.updated').map((e) => e.eventId);
    const alphaOnly = (list: PublicEvent[]) => list.filter((e) => e.tokenId === 'tk_alpha').map((e) => e.eventId);
    const earlier = await open();
    await earlier.subscribe([...alphaFilter[0]], [...alphaFilter[1]]);
    const live = await open();
    await live.subscribe(['score.updated']);
    const one = batch(12);
    await publish(...one);
    await waitFor(() => ids(earlier).length === alphaOnly(one).length && ids(live).length === scoresOnly(one).length, 'the first batch');
    const older = earlier.of('event').at(-1).cursor as string;
    earlier.close();
    const two = batch(12);
    await publish(...two);
    await waitFor(() => ids(live).length === scoresOnly([...one, ...two]).length, 'the second batch of scores');
    // ALPHA scores of the second batch went out to `live` already; only its ALPHA signals are missing.
    await live.subscribe([...alphaFilter[0]], [...alphaFilter[1]], older);
    const missing = two.filter((e) => e.tokenId === 'tk_alpha' && e.type === 'signal.created').map((e) => e.eventId);
    await waitFor(() => ids(live).length === scoresOnly([...one, ...two]).length + missing.length, 'the missed signals');
    const caughtUp = live.of('event').slice(scoresOnly([...one, ...two]).length);
    expect(caughtUp.map((f) => f.id)).toEqual(missing);
    const three = batch(12);
    await publish(...three);
    const expected = new Set([...scoresOnly([...one, ...two, ...three]), ...missing, ...alphaOnly(three)]);
    await waitFor(() => ids(live).length === expected.size, 'the third batch');
    expect(new Set(ids(live))).toEqual(expected);
    live.close();

    // The first caught-up frame's cursor stands mid-way: the scores subscription further than the ALPHA one.
    const midway = caughtUp[0].cursor as string;
    const rest = ids(live).slice(ids(live).indexOf(caughtUp[0].id) + 1);
    const again = await open();
    await again.subscribe(['score.updated'], [], midway);
    await again.subscribe([...alphaFilter[0]], [...alphaFilter[1]], midway);
    await waitFor(() => ids(again).length >= rest.length, 'the rest');
    // Each subscription caught up as it came: the same events, each once, in another order.
    expect(new Set(ids(again)).size).toBe(ids(again).length);
    expect([...ids(again)].sort()).toEqual([...rest].sort());
    again.close();
  });

  it('reads again for a subscription resumed behind a catch-up under way, without skipping what it missed', async () => {
    const probe = await open();
    const older = (await probe.subscribe(['score.updated'], ['$ALPHA'])).cursor as string;
    const early = Array.from({ length: 10 }, () => publicEvent('token.score.updated', 'tk_alpha'));
    await publish(...early);
    await probe.next((f) => f.id === early.at(-1)!.eventId);
    const newer = probe.of('event').at(-1).cursor as string;
    probe.close();
    // 48 MB on ALPHA's partition: more than the loopback socket buffers (up to 32 MiB received, 4 MiB sent) and the 256 KiB send buffer hold.
    const bulk = Array.from({ length: 1000 }, (_, i) => (i % 50 === 0 ? publicEvent('token.score.updated', 'tk_alpha') : publicEvent('signal.created', 'tk_alpha', {}, 48_000)));
    for (let i = 0; i < bulk.length; i += 100) await publish(...bulk.slice(i, i + 100));
    const end = (await log.endOffsets(TOPICS.publicEvents.name)).map((p) => p.offset);
    // An instance started now (its feed at the end) with a small send buffer, so a paused client holds its catch-up mid-way.
    const held = await startStreamServer({ log, codec, store, logger: silentLogger, port: 0, host: '127.0.0.1', pingIntervalMs: 600_000, maxBufferedBytes: 256 * 1024, pollMs: 10 });
    try {
      const c = await open(key.key, {}, '', `ws://127.0.0.1:${held.port}/v1/stream`);
      // Paused as the answer arrives: the catch-up it starts gets no further than the buffers.
      c.socket.on('message', (data) => JSON.parse(String(data)).ref === 'ahead' && c.socket.pause());
      c.send({ type: 'subscribe', id: 'ahead', events: ['signal.created'], tokens: ['$ALPHA'], resume: newer });
      await c.next((f) => f.ref === 'ahead');
      c.send({ type: 'subscribe', id: 'behind', events: ['score.updated'], tokens: ['$ALPHA'], resume: older });
      // Still paused until the server has applied it: the catch-up is held mid-way by then.
      await waitFor(() => held.subscriptionCount() === 2, 'the second subscription applied');
      c.socket.resume();
      const signals = bulk.filter((e) => e.type === 'signal.created').map((e) => e.eventId);
      const scores = [...early, ...bulk].filter((e) => e.type === 'token.score.updated').map((e) => e.eventId);
      await waitFor(() => c.ids().length >= signals.length + scores.length, 'every signal and score', 30_000);
      // Its answer shows the catch-up under way: the signals subscription past the scores one, short of the end.
      const answer = decodeCursor(c.frames.find((f) => f.ref === 'behind').cursor)!;
      const ahead = [...answer.lagging.values()];
      expect(ahead).toHaveLength(1);
      const partition = ahead[0].findIndex((o, p) => o !== answer.positions[p]);
      expect(answer.positions[partition]).toBeLessThan(ahead[0][partition]);
      expect(ahead[0][partition]).toBeLessThan(end[partition]);
      expect(new Set(c.ids()).size).toBe(c.ids().length);
      expect([...c.ids()].sort()).toEqual([...signals, ...scores].sort());
      c.close();
    } finally {
      await held.stop();
    }
  });

  it('resumes on another instance of the stream: the cursor is log positions', async () => {
    const other = await startStreamServer({ log, codec, store, logger: silentLogger, port: 0, host: '127.0.0.1', pollMs: 10 });
    try {
      const c = await open();
      const { cursor: atSubscribe } = await c.subscribe(['narrative.shift']);
      const shifts = Array.from({ length: 6 }, () => publicEvent('narrative.shift', null));
      await publish(...shifts.slice(0, 3));
      await waitFor(() => ids(c).length === 3, 'three shifts');
      const cursor = c.of('event').at(-1).cursor;
      c.close();
      await publish(...shifts.slice(3));
      const elsewhere = await open(key.key, {}, '', `ws://127.0.0.1:${other.port}/v1/stream`);
      await elsewhere.subscribe(['narrative.shift'], [], cursor);
      await waitFor(() => ids(elsewhere).length === 3, 'the three missed shifts');
      expect(ids(elsewhere)).toEqual(shifts.slice(3).map((e) => e.eventId));
      elsewhere.close();
      // The `subscribed` answer's cursor: for a client that had received nothing yet.
      const fromStart = await open(key.key, {}, '', `ws://127.0.0.1:${other.port}/v1/stream`);
      await fromStart.subscribe(['narrative.shift'], [], atSubscribe);
      await waitFor(() => ids(fromStart).length === 6, 'all six shifts');
      expect(ids(fromStart)).toEqual(shifts.map((e) => e.eventId));
      fromStart.close();
    } finally {
      await other.stop();
    }
  });

  it('refuses a malformed, foreign or too old cursor with VALIDATION on body.resume, telling the client to resync over REST', async () => {
    const c = await open();
    const partitions = TOPICS.publicEvents.partitions;
    const ends = (await log.endOffsets(TOPICS.publicEvents.name)).map((p) => p.offset);
    const cursors = {
      malformed: 'not-a-cursor',
      foreign: encodeCursor({ issuedAt: Date.now(), positions: Array(partitions).fill(1e9), lagging: new Map() }),
      wrongShape: encodeCursor({ issuedAt: Date.now(), positions: [0], lagging: new Map() }),
      tooOld: encodeCursor({ issuedAt: Date.now() - RESUME_WINDOW_MS - 60_000, positions: ends, lagging: new Map() }),
    };
    const answers: Record<string, any> = Object.fromEntries(await Promise.all(Object.entries(cursors).map(async ([name, cursor]) => [name, await c.subscribe(['signal.created'], [], cursor)])));
    for (const answer of Object.values(answers)) {
      expect(answer).toMatchObject({ type: 'error', code: 'VALIDATION', details: { issues: [{ path: 'body.resume', message: expect.stringMatching(/resync over REST/) }] } });
    }
    expect(Object.fromEntries(Object.entries(answers).map(([name, a]) => [name, a.details.issues[0].code]))).toEqual({
      malformed: 'invalid_cursor',
      foreign: 'invalid_cursor',
      wrongShape: 'invalid_cursor',
      tooOld: 'cursor_expired',
    });
    // A current cursor is accepted.
    const fresh = encodeCursor({ issuedAt: Date.now(), positions: ends, lagging: new Map() });
    expect(await c.subscribe(['signal.created'], [], fresh)).toMatchObject({ type: 'subscribed' });
    c.close();
  });
});

describe('discovery', () => {
  it('announces the stream role at its public URL while it runs, and unavailable once it stopped', async () => {
    const api = createApi({ log, codec, store, logger: silentLogger, startedAt: Date.now(), streams: new StreamDirectory({ log, codec }) });
    const http = api.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => http.once('listening', resolve));
    const info = async () => (await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/v1/stream/info`)).json() as Promise<any>;
    try {
      expect(await info()).toMatchObject({ available: false, url: null, message: expect.stringMatching(/not available/) });
      const role = await streamRole.start({
        config: loadConfig({ TQA_DATA_DIR: world.dir, STREAM_PORT: '0', TQA_STREAM_PUBLIC_URL: 'wss://stream.example.test/' }),
        logger: silentLogger,
        services: { log, codec, registry: new LocalSchemaRegistry(world.dir), close: async () => undefined },
        store: async () => store,
        stdout: sink().stream,
      });
      expect(await info()).toMatchObject({ available: true, url: 'wss://stream.example.test/v1/stream', message: null });
      await role.stop();
      expect(await info()).toMatchObject({ available: false, url: null });
    } finally {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await api.close();
    }
  });
});

describe('liveness and lifecycle', () => {
  it('pings with a frame and a WebSocket ping, and closes a client that does not answer', async () => {
    const answering = await open();
    let pings = 0;
    answering.socket.on('ping', () => pings++);
    await answering.next((f) => f.type === 'ping');
    const silent = await open(key.key, { autoPong: false });
    await waitFor(() => silent.closed ?? undefined, 'the silent client closed');
    await waitFor(() => pings >= 2, 'WebSocket pings');
    expect(answering.closed).toBeNull();
    answering.close();
  });

  it('closes the sockets of a revoked key with 4401', async () => {
    const doomed = await createKey(['stream:read']);
    const c = await open(doomed.key);
    const err = sink();
    expect(await keysCommand.run(['revoke', doomed.id], { config, logger: silentLogger, stdout: sink().stream, stderr: err.stream }), err.text()).toBe(0);
    expect(await waitFor(() => c.closed ?? undefined, 'the revoked key closed')).toMatchObject({ code: 4401 });
  });

  it('closes the sockets of a key whose plan change takes stream:read away with 4402, and refuses its next upgrade with 403', async () => {
    const downgraded = await createKey(['stream:read', 'quant:read']);
    const c = await open(downgraded.key);
    // `set-plan` returns once every API and stream has read the log since the change.
    const changed = JSON.parse(await runCommand(keysCommand, config, ['set-plan', downgraded.id, '--plan', 'free', '--scopes', 'quant:read', '--json']));
    expect(changed).toEqual({ id: downgraded.id, plan: 'free', scopes: ['quant:read'] });
    expect(await waitFor(() => c.closed ?? undefined, 'the downgraded key closed')).toMatchObject({ code: 4402 });
    const again = await refused({ Authorization: `Bearer ${downgraded.key}` });
    expect([again.status, again.body.error.code]).toEqual([403, 'FORBIDDEN']);
    const listed = (JSON.parse(await runCommand(keysCommand, config, ['list', '--json'])) as any[]).find((k) => k.id === downgraded.id);
    expect(listed).toMatchObject({ plan: 'free', scopes: ['quant:read'], revoked_at: null });
  });

  it('drops events for a slow reader with one EVENTS_DROPPED warning while a fast one gets every event', async () => {
    // An instance of its own whose pings are rare: here the paused reader must stay connected.
    const patient = await startStreamServer({ log, codec, store, logger: silentLogger, port: 0, host: '127.0.0.1', pingIntervalMs: 600_000, maxBufferedBytes: 2 * 1024 * 1024, pollMs: 10 });
    const at = `ws://127.0.0.1:${patient.port}/v1/stream`;
    const fast = await open(key.key, {}, '', at);
    await fast.subscribe(['signal.created']);
    const slow = await open(key.key, {}, '', at);
    await slow.subscribe(['signal.created']);
    slow.socket.pause();
    // 16 MB of events: more than the loopback socket buffers and the 2 MB send buffer hold.
    const burst = Array.from({ length: 8000 }, () => publicEvent('signal.created', 'tk_alpha', {}, 2_000));
    for (let i = 0; i < burst.length; i += 500) await publish(...burst.slice(i, i + 500));
    await waitFor(() => fast.of('event').length === burst.length, 'every event at the fast client', 60_000);
    expect(fast.of('event').map((f) => f.id)).toEqual(burst.map((e) => e.eventId));
    expect(fast.of('warning')).toEqual([]);
    slow.socket.resume();
    const after = publicEvent('signal.created', 'tk_alpha');
    await publish(after);
    const warning = await slow.next((f) => f.type === 'warning');
    expect(warning).toMatchObject({ code: 'EVENTS_DROPPED', dropped: expect.any(Number), since_event_id: expect.stringMatching(/^ev_/) });
    await slow.next((f) => f.id === after.eventId);
    const received = slow.of('event').length;
    expect(received + warning.dropped).toBe(burst.length + 1);
    expect(slow.of('warning')).toHaveLength(1);
    await patient.stop();
  });

  it('closes every socket with 1001 on a graceful shutdown', async () => {
    const c = await open();
    await server.stop();
    expect(await waitFor(() => c.closed ?? undefined, 'closed on shutdown')).toMatchObject({ code: 1001 });
  });
});
