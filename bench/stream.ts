import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { WebSocket, WebSocketServer } from 'ws';
import { issueApiKey } from '../api/keys.ts';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { openStore } from '../projections/open-store.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { PublicEvent } from '../schemas/records.ts';
import { startStreamServer } from '../stream/server.ts';
import { projectToEnd } from '../test/helpers/pipeline.ts';
import { report } from './results.ts';

const CLIENTS = Number(process.env.BENCH_STREAM_CLIENTS ?? 1000);
const RATE = Number(process.env.BENCH_STREAM_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_STREAM_SECONDS ?? 5);
const BURST = Number(process.env.BENCH_STREAM_BURST ?? 2000);
/** A signal object is about this large on the wire. */
const DATA = JSON.stringify({ object: 'signal', padding: 'x'.repeat(1200) });

/**
 * The WebSocket stream on the embedded log: CLIENTS connections (10 per key, the limit), all
 * subscribed to signal.created. Latency is from the append of a public event to its arrival
 * at each client, at RATE events/s; the baseline is a bare `ws` broadcast of a frame of the
 * same size to as many clients in the same process. Then the memory an idle connection adds
 * (both ends live in this process) and how many events/s one instance fans out to every client.
 */
export async function benchStream(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-stream-'));
  const logger = pino({ level: 'warn' });
  const config = loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'never' });
  const services = await openLogServices(config, logger);
  const { log, codec } = services;
  const store = await openStore(config, logger);
  try {
    const keys: string[] = [];
    for (let i = 0; i < Math.ceil(CLIENTS / 10); i++) keys.push((await issueApiKey(log, codec, { name: `bench ${i}`, plan: 'team', scopes: ['stream:read'], teamId: null })).key);
    await projectToEnd(config, log, codec, store);
    const server = await startStreamServer({ log, codec, store, logger, port: 0, host: '127.0.0.1', pollMs: 5 });
    const url = `ws://127.0.0.1:${server.port}/v1/stream`;

    let before = { js: 0, rss: 0 };
    const sent = new Map<string, number>();
    const latencies: number[] = [];
    let received = 0;
    const clients: WebSocket[] = [];
    // Measured from the 100th connection on, past whatever the first ones warm up.
    const WARM = Math.min(100, CLIENTS - 1);
    for (let i = 0; i < CLIENTS; i++) {
      if (i === WARM) before = memory();
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${keys[Math.floor(i / 10)]}` } });
      await new Promise<void>((resolve, reject) => {
        ws.on('message', (raw) => {
          const frame = JSON.parse(String(raw)) as { type: string; id?: string };
          if (frame.type === 'welcome') ws.send(JSON.stringify({ type: 'subscribe', id: 's', events: ['signal.created'] }));
          else if (frame.type === 'subscribed') resolve();
          else if (frame.type === 'event') {
            received++;
            const at = sent.get(frame.id!);
            if (at !== undefined) latencies.push(performance.now() - at);
          }
        });
        ws.once('error', reject);
      });
      clients.push(ws);
    }
    const after = memory();
    const perConnection = { js: (after.js - before.js) / (CLIENTS - WARM), rss: (after.rss - before.rss) / (CLIENTS - WARM) };

    let seq = 0;
    const event = (): PublicEvent => ({
      eventId: `ev_${(++seq).toString(16).padStart(24, '0')}`,
      type: 'signal.created',
      ts: Date.now(),
      dataset: 'live',
      tokenId: 'tk_bench',
      ownerKeyId: null,
      teamId: null,
      data: DATA,
    });
    const topic = TOPICS.publicEvents.name;
    const append = async (events: PublicEvent[]) =>
      log.append(topic, await Promise.all(events.map(async (e) => ({ key: e.tokenId, value: await codec.encode(topic, e), timestamp: e.ts }))));

    for (let i = 0; i < RATE * SECONDS; i++) {
      const e = event();
      sent.set(e.eventId, performance.now());
      await append([e]);
      await sleep(1000 / RATE);
    }
    await until(() => received >= RATE * SECONDS * CLIENTS);
    const stream = percentiles(latencies);

    received = 0;
    sent.clear();
    const burst = Array.from({ length: BURST }, event);
    const started = performance.now();
    for (let i = 0; i < burst.length; i += 500) await append(burst.slice(i, i + 500));
    await until(() => received >= BURST * CLIENTS);
    const fanOutSeconds = (performance.now() - started) / 1000;

    for (const ws of clients) ws.terminate();
    await server.stop();
    const bare = await bareBroadcast();

    process.stdout.write(
      `stream, ${CLIENTS} clients, ${RATE} events/s: append to client p50 ${stream.p50.toFixed(1)} ms, p99 ${stream.p99.toFixed(1)} ms\n` +
        `bare ws broadcast, same clients and frame size: p50 ${bare.p50.toFixed(1)} ms, p99 ${bare.p99.toFixed(1)} ms (stream/bare p99 ${(stream.p99 / bare.p99).toFixed(1)}x)\n` +
        `memory per idle connection (server and client ends): JS heap and buffers ${(perConnection.js / 1024).toFixed(1)} KiB, RSS ${(perConnection.rss / 1024).toFixed(1)} KiB (RSS grows in pages the heap may already hold)\n` +
        `fan-out: ${BURST} events to ${CLIENTS} clients in ${fanOutSeconds.toFixed(2)} s = ${Math.round(BURST / fanOutSeconds)} events/s, ${Math.round((BURST * CLIENTS) / fanOutSeconds)} frames/s\n`,
    );
    report({
      figure: `stream append to client p99, ${CLIENTS} clients, ${RATE} events/s`,
      value: stream.p99,
      unit: 'ms',
      baseline: { name: 'bare ws broadcast p99', value: bare.p99 },
    });
    report({ figure: `stream fan-out to ${CLIENTS} clients`, value: BURST / fanOutSeconds, unit: 'events/s' });
  } finally {
    await store.close();
    await services.close();
    await rm(dir, { recursive: true, force: true });
  }

  /** The same clients and frames through a bare WebSocketServer: send-to-arrival latency. */
  async function bareBroadcast(): Promise<{ p50: number; p99: number }> {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    const latencies: number[] = [];
    let received = 0;
    const clients: WebSocket[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const ws = new WebSocket(url);
      ws.on('message', (raw) => {
        received++;
        latencies.push(performance.now() - (JSON.parse(String(raw)) as { at: number }).at);
      });
      await new Promise((resolve) => ws.once('open', resolve));
      clients.push(ws);
    }
    for (let i = 0; i < RATE * SECONDS; i++) {
      const frame = JSON.stringify({ type: 'event', at: performance.now(), data: DATA });
      for (const c of wss.clients) c.send(frame);
      await sleep(1000 / RATE);
    }
    await until(() => received >= RATE * SECONDS * CLIENTS);
    for (const ws of clients) ws.terminate();
    await new Promise((resolve) => wss.close(resolve));
    return percentiles(latencies);
  }
}

// The bench runs without --expose-gc; a full collection before each reading keeps garbage out of the figure.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** JavaScript objects and buffers after a full collection, and the resident set (which also holds the sockets' native state). */
function memory(): { js: number; rss: number } {
  gc();
  const m = process.memoryUsage();
  return { js: m.heapUsed + m.external + m.arrayBuffers, rss: m.rss };
}

function percentiles(values: number[]): { p50: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { p50: at(0.5), p99: at(0.99) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(5);
}
