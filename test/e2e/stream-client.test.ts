import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi } from '../../api/app.ts';
import { DEMO_KEY_FILE } from '../../api/demo-key.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { streamRole } from '../../cli/roles/stream.ts';
import type { RunningRole } from '../../cli/roles/role.ts';
import { loadConfig } from '../../infra/config.ts';
import { LocalSchemaRegistry } from '../../infra/registry/local.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { PublicEvent } from '../../schemas/records.ts';
import { connectStream, StreamClientError, type StreamEventFrame, type StreamNotice } from '../../stream/client/stream-client.ts';
import { encodeCursor } from '../../stream/cursor.ts';
import { StreamDirectory } from '../../api/stream-presence.ts';
import { runCommand } from '../helpers/cli.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';
import { waitFor } from '../../infra/wait.ts';
import { openStreamWorld, publicEvent, type StreamWorld } from './stream-world.ts';

/**
 * The exported stream client and `tqa stream` against the real stream role and API on
 * loopback: discovery through GET /v1/stream/info, reconnects to a stream whose address
 * changed, resuming without gap or duplicate, and the refusals that stop it.
 */

const ROOT = join(import.meta.dirname, '../..');
let world: StreamWorld;
let http: Server;
let closeApi: () => Promise<void>;
let api: string;
let key: { id: string; key: string };

/** A stream role instance as `tqa start --roles stream` runs it, on a port of its own. */
function startStream(): Promise<RunningRole> {
  return streamRole.start({
    config: loadConfig({ TQA_DATA_DIR: world.dir, STREAM_PORT: '0' }),
    logger: silentLogger,
    services: { log: world.log, codec: world.codec, registry: new LocalSchemaRegistry(world.dir), close: async () => undefined },
    store: async () => world.store,
    stdout: sink().stream,
  });
}

async function streamInfo(): Promise<{ available: boolean; url: string | null }> {
  return (await fetch(`${api}/v1/stream/info`)).json() as Promise<{ available: boolean; url: string | null }>;
}

beforeAll(async () => {
  world = await openStreamWorld();
  const app = createApi({ log: world.log, codec: world.codec, store: world.store, logger: silentLogger, startedAt: Date.now(), streams: new StreamDirectory({ log: world.log, codec: world.codec }) });
  closeApi = () => app.close();
  http = app.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', resolve));
  api = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  key = await world.createKey(['stream:read']);
});

afterAll(async () => {
  await new Promise<void>((resolve) => http?.close(() => resolve()));
  await closeApi?.();
  await world?.close();
});

describe('the exported stream client', () => {
  it('follows the stream to its new address after a restart and resumes without gap or duplicate', async () => {
    let stream = await startStream();
    const firstUrl = (await streamInfo()).url;
    const received: StreamEventFrame[] = [];
    const notices: StreamNotice[] = [];
    const client = connectStream({
      api,
      key: key.key,
      subscriptions: [{ events: ['signal.created'], tokens: ['$ALPHA'] }, { events: ['narrative.shift'] }],
      onEvent: (frame) => received.push(frame),
      onNotice: (notice) => notices.push(notice),
      backoff: { initialMs: 20, maxMs: 100 },
    });
    try {
      // Both subscriptions in place before anything is published.
      await waitFor(() => notices.filter((n) => n.kind === 'subscribed').length === 2, 'subscribed');
      const wanted = (list: PublicEvent[]) => list.filter((e) => e.type === 'narrative.shift' || e.tokenId === 'tk_alpha').map((e) => e.eventId);
      const mix = () => [publicEvent('signal.created', 'tk_alpha'), publicEvent('signal.created', 'tk_beta'), publicEvent('narrative.shift', null), publicEvent('signal.created', 'tk_alpha')];
      const before = [...mix(), ...mix()];
      await world.publish(...before);
      await waitFor(() => received.length === wanted(before).length, 'the first events');

      await stream.stop();
      // While no stream runs: the client keeps asking, the events wait in the log.
      const meanwhile = [...mix(), ...mix(), ...mix()];
      await world.publish(...meanwhile);
      await waitFor(() => notices.some((n) => n.kind === 'reconnecting' && /not available/.test(n.reason)), 'an unavailable stream seen');
      stream = await startStream();
      const secondUrl = (await streamInfo()).url;
      expect(secondUrl).not.toBe(firstUrl);
      await waitFor(() => received.length === wanted([...before, ...meanwhile]).length, 'the missed events');
      const after = mix();
      await world.publish(...after);
      const all = wanted([...before, ...meanwhile, ...after]);
      await waitFor(() => received.length >= all.length, 'the live events');

      const ids = received.map((f) => f.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual([...all].sort());
      const connectedTo = notices.filter((n) => n.kind === 'connected').map((n) => (n as { url: string }).url);
      expect(connectedTo).toEqual([firstUrl, secondUrl]);
      expect(notices.filter((n) => n.kind === 'subscribed').map((n) => (n as { resumed: boolean }).resumed)).toEqual([false, false, true, true]);
    } finally {
      await client.close();
      await stream.stop();
    }
    await expect(client.done).resolves.toBeUndefined();
  });

  it('stops with a StreamClientError on a refused key (401), a revoked one (4401) and one whose plan change took the stream away (4402)', async () => {
    const stream = await startStream();
    try {
      const unknown = connectStream({ api, key: `svc_live_${'A'.repeat(43)}`, subscriptions: [{ events: ['signal.created'] }], onEvent: () => undefined });
      await expect(unknown.done).rejects.toEqual(expect.objectContaining({ name: 'StreamClientError', code: 401 }));

      const doomed = await world.createKey(['stream:read']);
      const client = connectStream({ api, key: doomed.key, subscriptions: [{ events: ['signal.created'] }], onEvent: () => undefined });
      await waitFor(() => client.cursor ?? undefined, 'subscribed');
      await runCommand(keysCommand, world.config, ['revoke', doomed.id]);
      const err = await client.done.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(StreamClientError);
      expect(err).toMatchObject({ code: 4401, message: expect.stringMatching(/revoked/) });

      const downgraded = await world.createKey(['stream:read']);
      const other = connectStream({ api, key: downgraded.key, subscriptions: [{ events: ['signal.created'] }], onEvent: () => undefined });
      await waitFor(() => other.cursor ?? undefined, 'subscribed');
      await runCommand(keysCommand, world.config, ['set-plan', downgraded.id, '--plan', 'free', '--scopes', 'quant:read']);
      await expect(other.done).rejects.toMatchObject({ name: 'StreamClientError', code: 4402 });
    } finally {
      await stream.stop();
    }
  });
});

describe('tqa stream', () => {
  it('prints the events of the running service as JSON lines, with the demo key of the data dir', async () => {
    const stream = await startStream();
    // The demo key is what `tqa stream` falls back on without --key or TQA_API_KEY.
    await writeFile(join(world.dir, DEMO_KEY_FILE), `${key.key}\n`, { mode: 0o600 });
    // Resuming from where the log ends now: the events published next reach the process, however late it subscribes.
    const ends = (await world.log.endOffsets(TOPICS.publicEvents.name)).map((p) => p.offset);
    const from = encodeCursor({ issuedAt: Date.now(), positions: ends, lagging: new Map() });
    const env: NodeJS.ProcessEnv = { ...process.env, TQA_DATA_DIR: world.dir, LOG_LEVEL: 'silent' };
    delete env.TQA_API_KEY;
    const child = spawn(process.execPath, ['bin/tqa.js', 'stream', '--events', 'signal.created,score.updated', '--tokens', '$BETA', '--api', api, '--resume', from, '--json'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const events = [publicEvent('signal.created', 'tk_beta'), publicEvent('signal.created', 'tk_alpha'), publicEvent('token.score.updated', 'tk_beta'), publicEvent('signal.ended', 'tk_beta')];
      await world.publish(...events);
      // Published later on the same partition: once it is printed, everything before it is.
      const marker = publicEvent('signal.created', 'tk_beta');
      await world.publish(marker);
      const lines = () => stdout.split('\n').filter(Boolean);
      await waitFor(() => stdout.includes(marker.eventId), `the marker from tqa stream (stderr: ${stderr})`, 30_000);
      const printed = lines().map((line) => JSON.parse(line) as StreamEventFrame);
      expect(printed.map((f) => [f.id, f.event])).toEqual([
        [events[0].eventId, 'signal.created'],
        [events[2].eventId, 'score.updated'],
        [marker.eventId, 'signal.created'],
      ]);
      expect(printed[0]).toMatchObject({ type: 'event', dataset: 'live', cursor: expect.any(String), data: JSON.parse(events[0].data) });
      expect(stderr).toMatch(/^connected to ws:\/\/localhost:\d+\/v1\/stream/m);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stderr).toMatch(/resume with --resume [A-Za-z0-9_-]+/);
    } finally {
      child.kill('SIGKILL');
      await stream.stop();
    }
  });
});
