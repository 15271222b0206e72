import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayCommand } from '../../cli/commands/replay.ts';
import { appendEvent } from '../../projections/control-events.ts';
import { loadConfig } from '../../infra/config.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { PublicEvent, WebhookDelivery } from '../../schemas/records.ts';
import { appendWebhookEvent } from '../../webhooks/commands.ts';
import { SecretBox } from '../../webhooks/secret-box.ts';
import { verifyWebhook } from '../../webhooks/signature.ts';
import { signalGroup } from '../../infra/peers/peer-process.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';
import { waitFor } from '../../infra/wait.ts';
import { selfSignedCertificate, WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * The webhooks role as its own process (`tqa start --roles webhooks`), killed with SIGKILL
 * while deliveries are in flight and started again: every event still arrives, verified,
 * and every one ends with a delivered attempt on record.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const serviceKey = randomBytes(32);
const SECRET = 'whsec_crash-test-secret';
let dir: string;
let log: FileEventLog;
let codec: Codec;
let receiver: WebhookReceiver;
let env: NodeJS.ProcessEnv;
const children = new Set<ChildProcess>();

function startRole(): { child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, ['bin/tqa.js', 'start', '--roles', 'webhooks'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  children.add(child);
  return { child, stderr: () => err };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  signalGroup(child, 'SIGKILL');
  await exited;
  children.delete(child);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-webhooks-crash-'));
  ({ log, codec } = await openEmbedded(dir));
  const tls = selfSignedCertificate();
  await writeFile(join(dir, 'receiver-ca.pem'), tls.cert);
  receiver = await WebhookReceiver.start(tls);
  env = {
    ...process.env,
    TQA_DATA_DIR: dir,
    TQA_LOG: 'embedded',
    TQA_SIM: 'off',
    TQA_WEBHOOKS_ALLOW_PRIVATE: 'true',
    TQA_WEBHOOKS_KEY: serviceKey.toString('base64'),
    NODE_EXTRA_CA_CERTS: join(dir, 'receiver-ca.pem'),
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  for (const child of children) await kill(child);
  await receiver?.stop();
  await log?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the webhooks role killed with deliveries in flight', () => {
  it('delivers every event after a restart, none lost', async () => {
    const now = Date.now();
    const webhookId = `wh_${randomBytes(12).toString('hex')}`;
    await appendWebhookEvent(log, codec, {
      webhookId, action: 'create', version: 1, keyId: 'key_crash000', teamId: null, dataset: 'live', url: receiver.url('/crash'),
      events: ['signal.created'], sealedSecret: new SecretBox(serviceKey).seal(SECRET, webhookId), status: 'enabled',
      disabledReason: null, resendEventId: null, resendSince: null, createdAt: now, enabledAt: now, ts: now,
    });
    receiver.answer('/crash', 'hang');
    const first = startRole();
    await waitFor(() => first.stderr().includes('TQA_WEBHOOKS_ALLOW_PRIVATE is on'), 'the development-setting warning');
    const events: PublicEvent[] = [];
    for (let i = 0; i < 5; i++) {
      const event: PublicEvent = {
        eventId: `ev_${randomBytes(12).toString('hex')}`, type: 'signal.created', ts: now + i, dataset: 'live',
        tokenId: `tk_c${i}`, ownerKeyId: null, teamId: null, data: JSON.stringify({ object: 'signal', n: i }),
      };
      events.push(event);
      await appendEvent(log, codec, TOPICS.publicEvents.name, event.tokenId!, event);
    }
    // Four sends per webhook at a time: four hang in flight, the fifth waits its turn.
    await waitFor(() => receiver.to('/crash').length === 4, 'deliveries in flight');
    await kill(first.child);

    receiver.answer('/crash', { status: 200 });
    startRole();
    const wanted = new Set(events.map((e) => e.eventId));
    await waitFor(() => [...wanted].every((id) => receiver.to('/crash').some((r) => JSON.parse(r.body).id === id)), 'every event delivered');
    for (const r of receiver.to('/crash')) {
      expect(verifyWebhook({ payload: r.body, header: r.headers['service-signature'] as string, secret: SECRET })).toMatchObject({ object: 'event' });
    }
    const recorded = await waitFor(async () => {
      const attempts = await Promise.all((await readTopic(log, TOPICS.webhookDeliveries.name)).map((r) => codec.decode(r.topic, r.value!)));
      const delivered = new Set((attempts as WebhookDelivery[]).filter((a) => a.outcome === 'delivered').map((a) => a.eventId));
      return [...wanted].every((id) => delivered.has(id)) && delivered;
    }, 'a delivered attempt recorded for every event');
    expect(recorded.size).toBe(5);
  });

  it('sends nothing again when the projections are rebuilt with tqa replay', async () => {
    const before = receiver.requests.length;
    const attemptsBefore = (await readTopic(log, TOPICS.webhookDeliveries.name)).length;
    const err = sink();
    const code = await replayCommand.run([], { config: loadConfig({ TQA_DATA_DIR: dir }), logger: silentLogger, stdout: sink().stream, stderr: err.stream });
    expect(code, err.text()).toBe(0);
    // A marker published after the replay: once it arrives, anything the replay caused would have too.
    const marker: PublicEvent = {
      eventId: `ev_${randomBytes(12).toString('hex')}`, type: 'signal.created', ts: Date.now(), dataset: 'live',
      tokenId: 'tk_c0', ownerKeyId: null, teamId: null, data: '{"object":"signal"}',
    };
    await appendEvent(log, codec, TOPICS.publicEvents.name, 'tk_c0', marker);
    await waitFor(() => receiver.requests.length > before && receiver.requests.at(-1), 'the marker');
    expect(receiver.requests.slice(before).map((r) => JSON.parse(r.body).id)).toEqual([marker.eventId]);
    await waitFor(async () => (await readTopic(log, TOPICS.webhookDeliveries.name)).length === attemptsBefore + 1, 'only the marker attempt recorded');
  });
});
