import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { appendEvent } from '../projections/control-events.ts';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { PublicEvent, WebhookEvent } from '../schemas/records.ts';
import { appendWebhookEvent } from '../webhooks/commands.ts';
import { Dispatcher } from '../webhooks/delivery/dispatcher.ts';
import { SecretBox } from '../webhooks/secret-box.ts';
import { report } from './results.ts';

/**
 * Event-to-webhook latency on the embedded log: public events appended at a steady rate,
 * delivered by the dispatcher to local HTTP receivers (the development setting), timed from
 * the append to the receiver's arrival, against a bare POST to the same receiver as baseline.
 */

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const fmt = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;

async function run(webhooks: number, eventsPerSecond: number, seconds: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-push-'));
  const logger = pino({ level: 'silent' });
  const { log, codec, close } = await openLogServices(loadConfig({ TQA_DATA_DIR: dir }), logger);
  const latencies: number[] = [];
  const sentAt = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c)).on('end', () => {
      const at = sentAt.get((JSON.parse(body) as { id: string }).id);
      if (at !== undefined) latencies.push(performance.now() - at);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  // Baseline: a bare POST to the same receiver.
  const bare: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t = performance.now();
    await new Promise<void>((resolve) => request({ host: '127.0.0.1', port, method: 'POST', path: '/bare' }, (res) => res.resume().on('end', resolve)).end('{"id":"x"}'));
    bare.push(performance.now() - t);
  }

  const secrets = new SecretBox(randomBytes(32));
  const start = Date.now();
  for (let i = 0; i < webhooks; i++) {
    const webhookId = `wh_${randomBytes(12).toString('hex')}`;
    const hook: WebhookEvent = {
      webhookId, action: 'create', version: 1, keyId: 'key_bench0000', teamId: null, dataset: 'live', url: `http://127.0.0.1:${port}/h${i}`,
      events: ['signal.created'], sealedSecret: secrets.seal('whsec_bench', webhookId), status: 'enabled', disabledReason: null, resendEventId: null, resendSince: null,
      createdAt: start, enabledAt: start, ts: start,
    };
    await appendWebhookEvent(log, codec, hook);
  }
  const dispatcher = new Dispatcher({ log, codec, logger, secrets, policy: { allowPrivate: true }, maxConcurrent: 256 });
  await dispatcher.start();

  const total = eventsPerSecond * seconds;
  const began = performance.now();
  for (let i = 0; i < total; i++) {
    const due = began + (i * 1000) / eventsPerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const event: PublicEvent = {
      eventId: `ev_${i.toString(16).padStart(24, '0')}`, type: 'signal.created', ts: Date.now(), dataset: 'live',
      tokenId: `tk_${i % 50}`, ownerKeyId: null, teamId: null, data: '{"object":"signal"}',
    };
    sentAt.set(event.eventId, performance.now());
    await appendEvent(log, codec, TOPICS.publicEvents.name, event.tokenId!, event);
  }
  const deadline = Date.now() + 60_000;
  while (latencies.length < total * webhooks && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  await dispatcher.stop();
  server.close();
  await close();
  await rm(dir, { recursive: true, force: true });
  process.stdout.write(
    `${webhooks} webhooks × ${eventsPerSecond} events/s for ${seconds} s (${latencies.length}/${total * webhooks} delivered): ` +
      `event to receiver ${fmt(latencies)}; baseline bare POST ${fmt(bare)}\n`,
  );
  const delivered = latencies.length === total * webhooks ? undefined : `${latencies.length} of ${total * webhooks} delivered`;
  report({
    figure: `event to webhook p99, ${webhooks} webhooks × ${eventsPerSecond} events/s`,
    value: percentile(latencies, 99),
    unit: 'ms',
    baseline: { name: 'bare POST p99', value: percentile(bare, 99) },
    note: delivered,
  });
}

export async function benchPush(): Promise<void> {
  await run(1, 50, 10);
  await run(10, 50, 10);
  await run(200, 5, 10);
}
