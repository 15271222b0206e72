import { spawn } from 'node:child_process';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { openLogServices, type LogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { waitFor } from '../infra/wait.ts';
import { DATASET } from '../presenters/resource.ts';
import { reachesKey, TERMINAL_RUN_STATUSES, type PublicEvent } from '../schemas/records.ts';
import { connectStream, type StreamClient, type StreamNotice } from '../stream/client/stream-client.ts';
import { decodeCursor, filterKey } from '../stream/cursor.ts';
import { decodePublicEvent, PUBLIC_EVENTS_TOPIC, READ_BATCH } from '../stream/feed.ts';
import type { StreamEvent } from '../stream/protocol.ts';
import { subscriptionMatches, type Subscription } from '../stream/subscriptions.ts';
import { RETRY_DELAYS_MS } from '../webhooks/delivery/schedule.ts';
import { verifyWebhook } from '../webhooks/signature.ts';
import { listen, percentile } from './load-client.ts';
import { atMost, notMeasured, report, type Measured } from './results.ts';
import { startService, untilCaughtUp } from './service.ts';

/**
 * A soak: `tqa start` as a user runs it (a child process, a SOAK_DAYS world, the live feed at
 * 60×), once caught up, under every kind of client at once for SOAK_MINUTES: REST readers
 * over every GET endpoint of /openapi.json (some `as_of`, some paging), stream clients that drop
 * their socket and resume, webhook receivers that answer fast, slowly, 500 or not at all, an
 * operator creating and revoking keys with `tqa keys`, and a backtest a minute. It prints a
 * line a minute (memory, lag per stage, answers by status, deliveries, stream gaps, key apply
 * times, backtests), then a verdict per target. All clients run in this process: keep it light.
 */

const DAYS = process.env.SOAK_DAYS ?? '1';
const MINUTES = Number(process.env.SOAK_MINUTES ?? 20);
const READ_RATE = Number(process.env.SOAK_READ_RATE ?? 50);
const STREAM_CLIENTS = Number(process.env.SOAK_STREAM_CLIENTS ?? 200);
const SPEED = '60';
const CATCH_UP_TIMEOUT_MS = 30 * 60_000;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MiB = 1024 ** 2;
const out = (line: string) => process.stdout.write(`${line}\n`);

/** Half the per-key connection limit (10), so a socket the server has not yet seen closed never makes a reconnect a 409. */
const STREAMS_PER_KEY = 5;
/** Tokens per stream client; one client in ALL_TOKENS_EVERY asks for every token, the heavy fan-out. */
const TOKENS_PER_CLIENT = 10;
const ALL_TOKENS_EVERY = 20;
const STREAM_EVENTS_ASKED: StreamEvent[] = ['score.updated', 'signal.created', 'signal.ended'];
/**
 * Public endpoints are limited per client IP, and every stream (re)connect asks the public
 * GET /v1/stream/info first: half of that budget paces the stream's (re)connects, the other
 * half is left to the readers' public reads, the health samples and the clients' own retries.
 */
const STREAM_SHARE_OF_PUBLIC_LIMIT = 0.5;
const PUBLIC_READ_EVERY_MS = 10_000;
const HEALTH_EVERY_MS = 10_000;
const MAX_READS_IN_FLIGHT = 200;
/** Pages followed per chain of `next_cursor`, so paging never crowds out the other reads. */
const MAX_PAGES = 3;
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Signals and convergences: score updates come tens a second at 60×, which would measure the
 * receivers rather than the service, and the delivery log (newest 100) could not account for them.
 */
const WEBHOOK_EVENTS = ['signal.created', 'cohort.convergence'];
type Behaviour = 'fast' | 'slow' | 'failing' | 'flaky' | 'down';
const RECEIVERS: Behaviour[] = ['down', 'failing', 'failing', 'flaky', 'flaky', 'flaky', 'slow', 'slow', 'slow', ...Array<Behaviour>(11).fill('fast')];
const SLOW_MS = 2_000;
const ANSWERS: Record<Behaviour, string> = {
  fast: '200 at once',
  slow: `200 after ${SLOW_MS / 1000} s`,
  failing: '500 always',
  flaky: '500 to the first attempt of every other event, 200 to the rest',
  down: 'closed (connection refused)',
};
const DELIVERIES_POLL_MS = 15_000;
/** A retry this much past its `next_retry_at` and still not recorded counts as lost. */
const RETRY_GRACE_MS = 60_000;
/** Events first attempted this close to the registrations or to the end are not checked for missing attempts. */
const DELIVERY_SETTLE_MS = 60_000;

const KEY_APPLY_TARGET_MS = 2_000;
const KEY_APPLY_TIMEOUT_MS = 10_000;
const OPERATOR_PAUSE_MS = 5_000;
const BACKTEST_POLL_MS = 2_000;
const BACKTEST_SETTLE_MS = 60_000;

export async function benchSoak(): Promise<void> {
  if (!Number.isInteger(MINUTES) || MINUTES < 2) throw new Error('SOAK_MINUTES must be a whole number of at least 2 (the lag is compared between halves)');
  const keyCount = Math.max(RECEIVERS.length, Math.ceil(STREAM_CLIENTS / STREAMS_PER_KEY));
  const service = await startService(keyCount, { TQA_SIM_DAYS: DAYS, TQA_SIM_SPEED: SPEED, TQA_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  const stop = new AbortController();
  let loops: Promise<void>[] = [];
  const cleanups: (() => unknown)[] = [];
  try {
    const { dataDir } = service;
    const began = performance.now();
    await untilCaughtUp(service, CATCH_UP_TIMEOUT_MS);
    out(`${DAYS} simulated day(s), live feed at ${SPEED}×: seeded and caught up in ${((performance.now() - began) / 1000).toFixed(0)} s; soaking ${MINUTES} min`);

    const api = new Api(service.base);
    const keys = await describeKeys(api, service.keys);
    const rateLimit = keys[0].rateLimit;
    if ((READ_RATE * 60) / keys.length > rateLimit / 2) throw new Error(`SOAK_READ_RATE ${READ_RATE} would take more than half of the ${rateLimit}/min of each of ${keys.length} keys`);
    const publicLimit = Number((await api.request('/v1/health', null))?.headers.get('ratelimit-limit'));
    const connectsPerMinute = Math.floor(publicLimit * STREAM_SHARE_OF_PUBLIC_LIMIT);
    if (!(connectsPerMinute >= 1)) throw new Error(`public endpoints allow ${publicLimit} requests a minute per IP: too few for the stream's reconnects`);

    const readers = new Readers(api, keys, (await api.request('/openapi.json', null))!.body as OpenApi, Date.now());
    const receivers = await startReceivers(api, keys, (server) => cleanups.push(() => closeServer(server)));
    const receiversRegisteredAt = Date.now();
    await readers.fillPools(receivers);
    const index = await PublicEventIndex.open(dataDir);
    cleanups.push(() => index.close());
    const fleet = new StreamFleet(service.base, keys, readers.tokenIds(), connectsPerMinute);
    cleanups.push(() => fleet.closeAll());
    const operators = new Operators(api, dataDir);
    const backtests = new Backtests(api, readers);
    cleanups.push(() => backtests.settle(0));
    const health = new HealthSampler(api);

    out(`readers: ${READ_RATE} req/s over ${keys.length} Team keys (${rateLimit}/min each); public endpoints one per ${PUBLIC_READ_EVERY_MS / 1000} s (${publicLimit}/min per IP)`);
    out(`  ${readers.coverage()}`);
    out(
      `stream: ${STREAM_CLIENTS} clients on ${STREAM_EVENTS_ASKED.join(', ')} (one in ${ALL_TOKENS_EVERY} on every token, the others on ${TOKENS_PER_CLIENT}), ` +
        `each dropping its socket and resuming every ${(fleet.meanDropMs / 60_000).toFixed(1)} min on average; (re)connects paced at ${fleet.perMinute}/min`,
    );
    out(`webhooks: ${receivers.length} receivers on ${WEBHOOK_EVENTS.join(', ')}: ${tally(receivers.map((r) => ANSWERS[r.behaviour]))}`);
    out('event-loop delay of the service: /v1/health does not expose it; not sampled');

    const t0 = Date.now();
    loops = [readers.run(stop.signal), fleet.run(stop.signal), pollDeliveries(api, receivers, stop.signal), operators.run(stop.signal), health.run(stop.signal)];
    const rssMiB: number[] = [(await service.memory()).rss / MiB];
    const lagMax: number[] = [];
    for (let minute = 1; minute <= MINUTES; minute++) {
      // A backtest as each minute begins, each with another key (a key's runs are its own).
      backtests.start(keys[minute % keys.length].key);
      await delay(Math.max(0, t0 + minute * 60_000 - Date.now()));
      await index.readToEnd();
      fleet.check(index);
      rssMiB.push((await service.memory()).rss / MiB);
      const lag = health.takeMinute();
      lagMax.push(lag.total);
      out(
        [
          `minute ${minute}: RSS ${int(rssMiB[minute])} MiB`,
          `lag max ${int(lag.total)} records (${lag.stages || 'every stage at 0'})`,
          `answers ${api.minuteSummary()}, ${readers.takeNotSent()} reads not sent`,
          `webhooks ${deliverySummary(receivers)}`,
          `stream ${fleet.summary()}`,
          `keys ${operators.summary()}`,
          `backtests ${backtests.summary()}`,
        ].join(' | '),
      );
    }

    stop.abort();
    await Promise.all(loops);
    await fleet.closeAll();
    await backtests.settle(BACKTEST_SETTLE_MS);
    await index.readToEnd();
    fleet.check(index);
    await pollDeliveries(api, receivers);
    await Promise.all(receivers.map((r) => r.refreshStatus(api)));
    const fates = webhookFates(receivers, receiversRegisteredAt, Date.now());

    out('\nwebhook receivers (events attempted: delivered / in the retry schedule / stopped by an auto-disable / given up / lost):');
    for (const r of receivers) out(`  ${r.describe(fates.get(r)!)}`);
    out(`readers: ${readers.details()}`);
    out(`stream: ${fleet.details(index)}`);
    for (const sample of api.errorSamples) out(`  error: ${sample}`);

    out('\nverdicts:');
    const firstHalf = Math.max(...lagMax.slice(0, Math.floor(MINUTES / 2)));
    const lastHalf = Math.max(...lagMax.slice(Math.floor(MINUTES / 2)));
    verdict({
      figure: 'soak: 5xx answers and failed requests',
      value: api.errors(),
      unit: 'requests',
      target: atMost(0, 'requests'),
      note: `${MINUTES} min at ${READ_RATE} req/s, ${STREAM_CLIENTS} stream clients, ${receivers.length} webhooks, a ${DAYS}-day world at ${SPEED}×; ${int(api.requests())} requests: ${formatTally(api.total)}`,
    });
    verdict({ figure: 'soak: rate-limited answers (429)', value: api.total.get('429') ?? 0, unit: 'requests', note: 'counted apart from the errors' });
    verdict({ figure: 'soak: stream gaps and duplicates', value: fleet.gaps + fleet.duplicates, unit: 'events', target: atMost(0, 'events'), note: fleet.verdictNote() });
    const lost = [...fates.values()].reduce((n, l) => n + l.lost.length, 0);
    verdict({ figure: 'soak: webhook deliveries lost', value: lost, unit: 'events', target: atMost(0, 'events'), note: webhookNote(receivers, fates) });
    verdict({
      figure: 'soak: webhook deliveries whose signature does not verify',
      value: receivers.reduce((n, r) => n + r.badSignatures, 0),
      unit: 'requests',
      target: atMost(0, 'requests'),
    });
    if (operators.applyMs.length > 0) {
      verdict({ figure: 'soak: key applied p99', value: percentile(operators.applyMs, 0.99), unit: 'ms', target: atMost(KEY_APPLY_TARGET_MS, 'ms'), note: operators.verdictNote() });
    } else notMeasured('soak: key applied p99', atMost(KEY_APPLY_TARGET_MS, 'ms').text, `no key was created: ${operators.failures.join('; ') || 'no command ran'}`);
    verdict({ figure: 'soak: revoked keys still accepted', value: operators.revokedAccepted, unit: 'keys', target: atMost(0, 'keys'), note: `each checked with GET /v1/key as soon as \`tqa keys revoke\` returned; ${operators.summary()}` });
    verdict({
      figure: 'soak: max processing lag, last half',
      value: lastHalf,
      unit: 'records',
      baseline: { name: 'first half', value: firstHalf },
      // The health threshold of "caught up" is the least margin: a processor commits only at checkpoints.
      target: atMost(firstHalf + Math.max(health.caughtUpLag, firstHalf / 4), 'records'),
      note: `per-minute maxima of processing.lag_records, sampled every ${HEALTH_EVERY_MS / 1000} s: ${lagMax.map(int).join(', ')}`,
    });
    verdict({
      figure: 'soak: RSS slope after catch-up',
      value: slopePerHour(rssMiB.slice(1)),
      unit: 'MiB/h',
      note: `least squares over minutes 1–${MINUTES}: ${int(rssMiB[1])} → ${int(rssMiB[MINUTES])} MiB; short soaks are dominated by GC, a leak shows over hours`,
    });
    verdict({ figure: 'soak: backtests failed or unfinished', value: backtests.failed.length + backtests.unfinished, unit: 'runs', target: atMost(0, 'runs'), note: backtests.verdictNote() });
  } finally {
    stop.abort();
    // Before anything closes: an operator's `tqa keys` must not outlive the data dir.
    await Promise.allSettled(loops);
    for (const cleanup of cleanups.reverse()) {
      await Promise.resolve()
        .then(cleanup)
        .catch((err: unknown) => process.stderr.write(`soak cleanup failed: ${String(err)}\n`));
    }
    await service.stop();
  }
}

/** Reports a headline row and prints its verdict. */
function verdict(row: Measured): void {
  report(row);
  const met = row.target === undefined ? 'no target' : `${row.target.meets(row.value, null) ? 'met' : 'NOT MET'} (${row.target.text})`;
  out(`  ${row.figure}: ${Number(row.value.toPrecision(4))} ${row.unit}, ${met}${row.baseline ? `, ${row.baseline.name} ${int(row.baseline.value)}` : ''}${row.note ? `; ${row.note}` : ''}`);
}

// ---- REST ---------------------------------------------------------------------------------

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** Every REST call of the soak goes through here, so that its answers are counted by status in one place. */
class Api {
  readonly total = new Map<string, number>();
  private minute = new Map<string, number>();
  private minuteLatencies: number[] = [];
  /** The first few 5xx answers and failed requests, to print. */
  readonly errorSamples: string[] = [];

  constructor(private readonly base: string) {}

  /** The answer, or null when the request failed (no answer within REQUEST_TIMEOUT_MS, a refused connection). */
  async request(path: string, key: string | null, init: { method?: string; body?: unknown } = {}): Promise<Answer | null> {
    const headers: Record<string, string> = key === null ? {} : { Authorization: `Bearer ${key}` };
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const method = init.method ?? 'GET';
    let answer: Answer;
    const sent = performance.now();
    try {
      const res = await fetch(this.base + path, {
        method,
        headers,
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      answer = { status: res.status, body: parseJson(await res.text()), headers: res.headers };
    } catch (err) {
      this.tally('failed');
      this.sample(`${method} ${path}: ${(err as Error).message}`);
      return null;
    }
    this.minuteLatencies.push(performance.now() - sent);
    this.tally(String(answer.status));
    if (answer.status >= 500) this.sample(`${answer.status} ${method} ${path}: ${JSON.stringify(answer.body).slice(0, 600)}`);
    return answer;
  }

  errors(): number {
    return [...this.total].reduce((n, [status, count]) => (isError(status) ? n + count : n), 0);
  }

  requests(): number {
    return [...this.total.values()].reduce((a, b) => a + b, 0);
  }

  /** This minute's answers by status and their latency, then counting starts again. */
  minuteSummary(): string {
    const [minute, latencies] = [this.minute, this.minuteLatencies];
    this.minute = new Map();
    this.minuteLatencies = [];
    const errors = [...minute].reduce((n, [status, count]) => (isError(status) ? n + count : n), 0);
    const latency = latencies.length === 0 ? '' : `, p50 ${int(percentile(latencies, 0.5))} ms, p99 ${int(percentile(latencies, 0.99))} ms`;
    return `${int([...minute.values()].reduce((a, b) => a + b, 0))} (${formatTally(minute)})${latency}, 5xx+failed ${errors}, 429 ${minute.get('429') ?? 0}`;
  }

  private tally(status: string): void {
    for (const map of [this.total, this.minute]) map.set(status, (map.get(status) ?? 0) + 1);
  }

  private sample(what: string): void {
    if (this.errorSamples.length < 5) this.errorSamples.push(what);
  }
}

const isError = (status: string) => status === 'failed' || status.startsWith('5');

/** A body as JSON, or as the text it is when it is not JSON (a proxy's error page, say). */
function parseJson(text: string): any {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

interface BenchKey {
  key: string;
  id: string;
  rateLimit: number;
}

/** Each pre-issued key's id (which events reach it) and rate limit, from GET /v1/key. */
async function describeKeys(api: Api, keys: string[]): Promise<BenchKey[]> {
  return Promise.all(
    keys.map(async (key) => {
      const res = await api.request('/v1/key', key);
      if (res?.status !== 200) throw new Error(`GET /v1/key answered ${res?.status ?? 'nothing'} for a pre-issued key`);
      return { key, id: res.body.id as string, rateLimit: res.body.rate_limit.limit as number };
    }),
  );
}

interface OpenApi {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; security?: unknown[] }>>;
}

/** A GET endpoint of /openapi.json, and what its requests may carry. */
interface Endpoint {
  template: string;
  /** The collection its path parameter names (`token`, `signals`, `webhooks`…): where values come from; null without one. */
  collection: string | null;
  asOf: boolean;
  paged: boolean;
  public: boolean;
}

/** A value for a path parameter, and the key that owns it (webhooks and backtest runs are a key's own); null: any key. */
interface Owned {
  value: string;
  owner: string | null;
}

/**
 * REST readers at READ_RATE over every GET endpoint whose path parameter can be filled, in
 * turn: a third with an `as_of` in the seeded history, and paged lists follow `next_cursor`
 * for a few pages. Requests go round the keys; a key's own resources are read with it.
 */
class Readers {
  private readonly endpoints: Endpoint[];
  private readonly pools = new Map<string, Owned[]>();
  private readonly nextPages = new Map<string, { path: string; key: string; depth: number }>();
  private inFlight = 0;
  private notSent = 0;
  private notSentThisMinute = 0;
  /** Answers other than 2xx per endpoint and status, to tell expected refusals (an `as_of` before a resource existed) from others. */
  private readonly refusals = new Map<string, number>();

  constructor(
    private readonly api: Api,
    private readonly keys: BenchKey[],
    doc: OpenApi,
    private readonly historyEnd: number,
  ) {
    this.endpoints = Object.entries(doc.paths).flatMap(([template, ops]) => {
      const get = ops.get;
      if (get === undefined) return [];
      const query = new Set((get.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name));
      const params = (get.parameters ?? []).filter((p) => p.in === 'path');
      return [
        {
          template,
          collection: params.length === 1 ? (/\/([^/]+)\/\{[^}]+\}/.exec(template)?.[1] ?? null) : null,
          asOf: query.has('as_of'),
          paged: query.has('cursor'),
          public: get.security?.length === 0,
        },
      ];
    });
  }

  /** Values of every path parameter the lists give, and the receivers' webhooks (read with their owner key). */
  async fillPools(receivers: Receiver[]): Promise<void> {
    const key = this.keys[0].key;
    const list = async (path: string) => {
      const res = await this.api.request(path, key);
      if (res?.status !== 200) throw new Error(`GET ${path} answered ${res?.status ?? 'nothing'}`);
      return res.body as { data: any[]; next_cursor: string | null };
    };
    const tokens: Owned[] = [];
    for (let cursor: string | null = ''; cursor !== null; ) {
      const page = await list(`/v1/quant/tokens?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      tokens.push(...page.data.map((t: { token_id: string }) => ({ value: t.token_id, owner: null })));
      cursor = page.next_cursor;
    }
    const narratives = (await list('/v1/quant/narratives')).data as { slug: string; top_contributors: { handle: string }[] }[];
    const handles = new Set(narratives.flatMap((n) => n.top_contributors.map((c) => c.handle)));
    const anyKey = (values: string[]): Owned[] => values.map((value) => ({ value, owner: null }));
    this.pools.set('token', tokens);
    this.pools.set('signals', anyKey((await list('/v1/quant/signals?limit=100')).data.map((s: { id: string }) => s.id)));
    this.pools.set('users', anyKey([...handles]));
    this.pools.set('cohorts', anyKey((await list('/v1/quant/cohorts')).data.map((c: { id: string }) => c.id)));
    this.pools.set('narratives', anyKey(narratives.map((n) => n.slug)));
    this.pools.set('event-studies', anyKey((await list('/v1/quant/event-studies')).data.map((s: { slug: string }) => s.slug)));
    this.pools.set('webhooks', receivers.map((r) => ({ value: r.webhookId, owner: r.key })));
    // Filled as the soak queues its backtests.
    this.pools.set('backtests', []);
  }

  addOwned(collection: string, value: string, owner: string): void {
    this.pools.get(collection)!.push({ value, owner });
  }

  tokenIds(): string[] {
    return this.pools.get('token')!.map((t) => t.value);
  }

  coverage(): string {
    const covered = this.endpoints.filter((e) => this.covers(e));
    const left = this.endpoints.filter((e) => !this.covers(e)).map((e) => e.template);
    return `${covered.length} GET endpoints read: ${covered.map((e) => e.template).join(' ')}${left.length > 0 ? `; not read (no values for their path): ${left.join(' ')}` : ''}`;
  }

  async run(signal: AbortSignal): Promise<void> {
    const privates = this.endpoints.filter((e) => !e.public && this.covers(e));
    const publics = this.endpoints.filter((e) => e.public);
    const publicEvery = Math.max(1, Math.round((READ_RATE * PUBLIC_READ_EVERY_MS) / 1000));
    const began = performance.now();
    for (let i = 0; !signal.aborted; i++) {
      await pause(began + (i * 1000) / READ_RATE - performance.now(), signal);
      if (signal.aborted) break;
      if (this.inFlight >= MAX_READS_IN_FLIGHT) {
        this.notSent++;
        this.notSentThisMinute++;
        continue;
      }
      const endpoint = i % publicEvery === 0 && publics.length > 0 ? publics[(i / publicEvery) % publics.length] : privates[i % privates.length];
      const read = this.next(endpoint, this.keys[i % this.keys.length].key);
      if (read === null) continue;
      this.inFlight++;
      void this.read(endpoint, read).finally(() => this.inFlight--);
    }
    while (this.inFlight > 0) await delay(50);
  }

  /** Reads this minute left unsent because MAX_READS_IN_FLIGHT were waiting for an answer; then counting starts again. */
  takeNotSent(): number {
    const n = this.notSentThisMinute;
    this.notSentThisMinute = 0;
    return n;
  }

  details(): string {
    return `${int(this.notSent)} reads not sent (${MAX_READS_IN_FLIGHT} waiting for an answer); answers other than 2xx: ${formatTally(this.refusals) || 'none'}`;
  }

  private covers(e: Endpoint): boolean {
    return e.collection === null ? !e.template.includes('{') : this.pools.has(e.collection);
  }

  /** The next request to `endpoint`: the next page of a chain, else a new one; null while its pool is empty. */
  private next(endpoint: Endpoint, key: string): { path: string; key: string | null; depth: number } | null {
    const follow = this.nextPages.get(endpoint.template);
    if (follow !== undefined) {
      this.nextPages.delete(endpoint.template);
      return follow;
    }
    let path = endpoint.template;
    let owner: string | null = null;
    if (endpoint.collection !== null) {
      const pool = this.pools.get(endpoint.collection)!;
      if (pool.length === 0) return null;
      const picked = pool[Math.floor(Math.random() * pool.length)];
      path = path.replace(/\{[^}]+\}/, encodeURIComponent(picked.value));
      owner = picked.owner;
    }
    const query = new URLSearchParams();
    if (endpoint.asOf && Math.random() < 1 / 3) query.set('as_of', this.pastTime());
    // Small pages, so that there is a next_cursor to follow.
    if (endpoint.paged) query.set('limit', '20');
    return { path: query.size > 0 ? `${path}?${query}` : path, key: endpoint.public ? null : (owner ?? key), depth: 1 };
  }

  /** A time inside the seeded history, an hour away from either end of it. */
  private pastTime(): string {
    const hours = Number(DAYS) * 24 - 2;
    return new Date(this.historyEnd - (1 + Math.random() * hours) * 3_600_000).toISOString();
  }

  private async read(endpoint: Endpoint, read: { path: string; key: string | null; depth: number }): Promise<void> {
    const res = await this.api.request(read.path, read.key);
    if (res !== null && (res.status < 200 || res.status > 299)) {
      const what = `${endpoint.template}${read.path.includes('as_of=') ? ' (as_of)' : ''} ${res.status}`;
      this.refusals.set(what, (this.refusals.get(what) ?? 0) + 1);
    }
    const cursor = res?.status === 200 ? (res.body?.next_cursor as string | null | undefined) : null;
    if (!endpoint.paged || !cursor || read.depth >= MAX_PAGES || read.key === null) return;
    const url = new URL(read.path, 'http://soak');
    url.searchParams.set('cursor', cursor);
    this.nextPages.set(endpoint.template, { path: `${url.pathname}${url.search}`, key: read.key, depth: read.depth + 1 });
  }
}

/** Samples /v1/health every HEALTH_EVERY_MS and keeps each minute's largest lag, in all and per stage. */
class HealthSampler {
  private total = 0;
  private readonly stages = new Map<string, number>();
  /** Up to how many records behind health still counts a stage as caught up, as health says. */
  caughtUpLag = 0;

  constructor(private readonly api: Api) {}

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const processing = (await this.api.request('/v1/health', null))?.body?.processing as
        | { lag_records: number; caught_up_lag_records: number; stages: { name: string; lag_records: number }[] }
        | null
        | undefined;
      if (processing) {
        this.caughtUpLag = processing.caught_up_lag_records;
        this.total = Math.max(this.total, processing.lag_records);
        for (const s of processing.stages) this.stages.set(s.name, Math.max(this.stages.get(s.name) ?? 0, s.lag_records));
      }
      await pause(HEALTH_EVERY_MS, signal);
    }
  }

  /** The minute's largest total lag and, for the stages that lagged, their largest lag; then sampling starts again. */
  takeMinute(): { total: number; stages: string } {
    const lagging = [...this.stages].filter(([, lag]) => lag > 0).sort((a, b) => b[1] - a[1]);
    const minute = { total: this.total, stages: lagging.map(([name, lag]) => `${name} ${int(lag)}`).join(', ') };
    this.total = 0;
    this.stages.clear();
    return minute;
  }
}

// ---- stream -------------------------------------------------------------------------------

/**
 * What public.events held from the start of the soak on, read straight from the log: what
 * each stream client should have received between two of its cursors (a cursor is the next
 * offset per partition, everything before it handed out).
 */
class PublicEventIndex {
  /** Event ids found at more than one position: the stream would rightly send them twice. */
  repeatedIds = 0;
  private readonly ids = new Set<string>();

  private constructor(
    private readonly services: LogServices,
    private readonly logger: pino.Logger,
    private readonly base: number[],
    /** Per partition, the events from `base` on (null: a record that holds none), without their bodies. */
    private readonly events: (PublicEvent | null)[][],
  ) {}

  static async open(dataDir: string): Promise<PublicEventIndex> {
    const logger = pino({ level: 'warn' });
    const services = await openLogServices(loadConfig({ TQA_DATA_DIR: dataDir }), logger);
    const ends = await services.log.endOffsets(PUBLIC_EVENTS_TOPIC);
    const base = ends.sort((a, b) => a.partition - b.partition).map((e) => e.offset);
    return new PublicEventIndex(services, logger, base, base.map(() => []));
  }

  /** The first offset read on `partition`: public.events' end when the soak began. */
  start(partition: number): number {
    return this.base[partition];
  }

  /** The offset after the last record read on `partition`. */
  end(partition: number): number {
    return this.base[partition] + this.events[partition].length;
  }

  at(partition: number, offset: number): PublicEvent | null {
    if (offset < this.base[partition] || offset >= this.end(partition)) throw new Error(`public.events ${partition}@${offset} is outside what the soak read`);
    return this.events[partition][offset - this.base[partition]];
  }

  async readToEnd(): Promise<void> {
    for (let p = 0; p < this.base.length; p++) {
      for (;;) {
        const records = await this.services.log.read(PUBLIC_EVENTS_TOPIC, p, this.end(p), READ_BATCH);
        if (records.length === 0) break;
        for (const record of records) {
          const event = await decodePublicEvent(record, { codec: this.services.codec, logger: this.logger });
          if (event !== null && this.ids.has(event.eventId)) this.repeatedIds++;
          if (event !== null) this.ids.add(event.eventId);
          this.events[p].push(event === null ? null : { ...event, data: '' });
        }
      }
    }
  }

  close(): Promise<void> {
    return this.services.close();
  }
}

/** Counts shared by the stream clients. */
interface StreamCounters {
  gapSamples: string[];
  notices: Map<string, number>;
  fatal: string[];
}

/**
 * One stream client: the project's client (connectStream), closed now and then and connected
 * again from the cursor it ended on. It checks what it receives: an event id twice is a
 * duplicate; an event of the log before its cursor that it asks for and never received is a gap.
 */
class StreamReader {
  private client: StreamClient | null = null;
  /** The cursor the last connection ended on: where the next one resumes. */
  private resumeFrom: string | null = null;
  private readonly received = new Set<string>();
  /** Per partition, below where every event it asks for was checked against `received`; null before its first subscription. */
  private checkedTo: number[] | null = null;
  dropAt = Infinity;
  connected = false;
  events = 0;
  duplicates = 0;
  gaps = 0;
  resumes = 0;

  constructor(
    private readonly name: string,
    private readonly key: BenchKey,
    private readonly subscription: Subscription<null>,
    private readonly counters: StreamCounters,
  ) {}

  connect(api: string, dropAfterMs: number): void {
    if (this.resumeFrom !== null) this.resumes++;
    const client = connectStream({
      api,
      key: this.key.key,
      subscriptions: [{ events: [...this.subscription.events], tokens: [...this.subscription.tokenIds] }],
      resume: this.resumeFrom ?? undefined,
      onEvent: (frame) => {
        this.events++;
        if (this.received.has(frame.id)) this.duplicates++;
        this.received.add(frame.id);
      },
      onNotice: (notice) => this.onNotice(notice, client),
    });
    client.done.catch((err: Error) => this.counters.fatal.push(`${this.name}: ${err.message}`));
    this.client = client;
    this.dropAt = Date.now() + dropAfterMs;
  }

  async drop(): Promise<void> {
    const client = this.client;
    if (client === null) return;
    this.client = null;
    this.connected = false;
    this.dropAt = Infinity;
    await client.close();
    this.resumeFrom = client.cursor;
  }

  check(index: PublicEventIndex): void {
    const cursor = this.client?.cursor ?? this.resumeFrom;
    if (this.checkedTo === null || cursor === null) return;
    const at = positionsOf(cursor);
    for (let p = 0; p < at.length; p++) {
      const upTo = Math.min(at[p], index.end(p));
      // A stream instance whose feed lagged the log when the soak began can start a client before the index does.
      for (let offset = Math.max(this.checkedTo[p], index.start(p)); offset < upTo; offset++) {
        const e = index.at(p, offset);
        if (e === null || e.dataset !== DATASET || !reachesKey(e, this.key.id, null) || !subscriptionMatches(this.subscription, e) || this.received.has(e.eventId)) continue;
        this.gaps++;
        if (this.counters.gapSamples.length < 5) this.counters.gapSamples.push(`${this.name} never got ${e.eventId} (${e.type}, public.events ${p}@${offset})`);
      }
      this.checkedTo[p] = Math.max(this.checkedTo[p], upTo);
    }
  }

  private onNotice(notice: StreamNotice, client: StreamClient): void {
    const count = (what: string) => this.counters.notices.set(what, (this.counters.notices.get(what) ?? 0) + 1);
    switch (notice.kind) {
      case 'connected':
        this.connected = true;
        return;
      case 'subscribed':
        // Subscribed from now (the first time, or after a refused resume): checking starts at its
        // cursor, which the client takes once this notice returns.
        if (!notice.resumed) queueMicrotask(() => (this.checkedTo = client.cursor === null ? null : positionsOf(client.cursor)));
        return;
      case 'reconnecting':
        this.connected = false;
        count(`client reconnected by itself: ${notice.reason}`);
        return;
      case 'resume_refused':
        count(`resume refused: ${notice.message}`);
        return;
      case 'warning':
      case 'error':
        count(`${notice.kind} ${notice.code}`);
        return;
    }
  }
}

function positionsOf(cursor: string): number[] {
  const position = decodeCursor(cursor);
  if (position === null) throw new Error(`the stream sent a cursor that does not decode: ${cursor}`);
  return position.positions;
}

/** STREAM_CLIENTS stream clients, (re)connected at a pace the public endpoints' per-IP limit leaves room for. */
class StreamFleet {
  private readonly readers: StreamReader[];
  /** Readers waiting to (re)connect, in order. */
  private readonly waiting: StreamReader[];
  private readonly counters: StreamCounters = { gapSamples: [], notices: new Map(), fatal: [] };
  /** Every client drops its socket this long after connecting on average: as often as the pace allows. */
  readonly meanDropMs: number;

  constructor(
    private readonly api: string,
    keys: BenchKey[],
    tokenIds: string[],
    readonly perMinute: number,
  ) {
    this.meanDropMs = (STREAM_CLIENTS / perMinute) * 60_000;
    this.readers = Array.from({ length: STREAM_CLIENTS }, (_, i) => {
      const tokens = i % ALL_TOKENS_EVERY === 0 ? [] : Array.from({ length: TOKENS_PER_CLIENT }, (_, j) => tokenIds[(i * TOKENS_PER_CLIENT + j) % tokenIds.length]);
      const subscription: Subscription<null> = {
        id: `soak-${i}`,
        connection: null,
        events: STREAM_EVENTS_ASKED,
        tokenIds: [...new Set(tokens)],
        filter: filterKey(STREAM_EVENTS_ASKED, tokens),
        since: null,
      };
      return new StreamReader(`client ${i}`, keys[i % keys.length], subscription, this.counters);
    });
    this.waiting = [...this.readers];
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const now = Date.now();
      const due = this.readers.filter((r) => r.dropAt <= now);
      await Promise.all(due.map((r) => r.drop()));
      // Ahead of the clients still to connect a first time: resuming is what is under test.
      this.waiting.unshift(...due);
      this.waiting.shift()?.connect(this.api, this.meanDropMs * (0.5 + Math.random()));
      await pause(60_000 / this.perMinute, signal);
    }
  }

  check(index: PublicEventIndex): void {
    for (const r of this.readers) r.check(index);
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.readers.map((r) => r.drop()));
  }

  get gaps(): number {
    return this.readers.reduce((n, r) => n + r.gaps, 0);
  }

  get duplicates(): number {
    return this.readers.reduce((n, r) => n + r.duplicates, 0);
  }

  summary(): string {
    const sum = (f: (r: StreamReader) => number) => int(this.readers.reduce((n, r) => n + f(r), 0));
    return `${sum((r) => (r.connected ? 1 : 0))}/${STREAM_CLIENTS} connected, ${sum((r) => r.events)} events, ${sum((r) => r.resumes)} resumes, gaps ${this.gaps}, duplicates ${this.duplicates}`;
  }

  verdictNote(): string {
    const resumes = this.readers.reduce((n, r) => n + r.resumes, 0);
    const events = this.readers.reduce((n, r) => n + r.events, 0);
    return `${this.gaps} gaps, ${this.duplicates} duplicates in ${int(events)} events to ${STREAM_CLIENTS} clients over ${int(resumes)} resumes; ${this.counters.fatal.length} clients stopped for good`;
  }

  details(index: PublicEventIndex): string {
    const lines = [
      `${index.repeatedIds} event ids at more than one position of public.events`,
      ...[...this.counters.notices].map(([what, n]) => `${n} × ${what}`),
      ...this.counters.gapSamples,
      ...this.counters.fatal.slice(0, 5).map((f) => `stopped: ${f}`),
    ];
    return lines.join('\n  ');
  }
}

// ---- webhooks -----------------------------------------------------------------------------

/** A delivery attempt as GET /v1/webhooks/{id}/deliveries lists it. */
interface Attempt {
  id: string;
  event_id: string;
  attempt: number;
  at: string;
  outcome: 'delivered' | 'failed';
  next_retry_at: string | null;
  test: boolean;
}

/** What became of each event a webhook was sent, or should have been. */
interface Fates {
  events: number;
  delivered: number;
  retrying: number;
  stoppedByDisable: number;
  givenUp: number;
  lost: string[];
}

/** A local receiver registered as a webhook: it verifies every signature, then answers as its behaviour says. */
class Receiver {
  webhookId = '';
  status = 'enabled';
  disabledAt: number | null = null;
  disabledReason: string | null = null;
  /** Every attempt the delivery log showed, by delivery id. */
  readonly attempts = new Map<string, Attempt>();
  requests = 0;
  badSignatures = 0;
  /** Deliveries of an event this receiver had already answered 200: at least once allows them. */
  repeats = 0;
  /** Polls of the delivery log that found only new attempts: some may have gone unseen. */
  overflows = 0;
  /** When each event first arrived, epoch ms. */
  private readonly arrived = new Map<string, number>();
  private readonly answered = new Set<string>();
  private lastPollAt = 0;
  private setSecret: (secret: string) => void = () => undefined;
  /** Known once the registration answered; a delivery may arrive first. */
  private readonly secret = new Promise<string>((resolve) => (this.setSecret = resolve));

  constructor(
    readonly name: string,
    readonly behaviour: Behaviour,
    readonly key: string,
  ) {}

  async register(api: Api, url: string): Promise<void> {
    const res = await api.request('/v1/webhooks', this.key, { method: 'POST', body: { url, events: WEBHOOK_EVENTS } });
    if (res?.status !== 201) throw new Error(`POST /v1/webhooks answered ${res?.status ?? 'nothing'}: ${JSON.stringify(res?.body)}`);
    this.webhookId = res.body.id;
    this.setSecret(res.body.secret);
  }

  async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let event: { id: string };
    try {
      event = verifyWebhook({ payload: Buffer.concat(chunks), header: req.headers['service-signature'] as string | undefined, secret: await this.secret }) as { id: string };
    } catch {
      this.badSignatures++;
      res.writeHead(400).end();
      return;
    }
    this.requests++;
    const first = !this.arrived.has(event.id);
    if (first) this.arrived.set(event.id, Date.now());
    if (this.answered.has(event.id)) this.repeats++;
    // Every other first attempt only: a delivery between two failures resets the streak that disables a webhook.
    if (this.behaviour === 'failing' || (this.behaviour === 'flaky' && first && this.arrived.size % 2 === 1)) {
      res.writeHead(500).end();
      return;
    }
    if (this.behaviour === 'slow') await delay(SLOW_MS);
    this.answered.add(event.id);
    res.writeHead(200).end();
  }

  /** Adds the newest 100 attempts of the delivery log to those seen. */
  async poll(api: Api): Promise<void> {
    const polledAt = Date.now();
    const res = await api.request(`/v1/webhooks/${this.webhookId}/deliveries?limit=100`, this.key);
    if (res?.status !== 200) return;
    this.lastPollAt = polledAt;
    const listed = (res.body.data as Attempt[]).filter((a) => !a.test);
    if (listed.length === 100 && this.attempts.size > 0 && listed.every((a) => !this.attempts.has(a.id))) this.overflows++;
    for (const a of listed) this.attempts.set(a.id, a);
  }

  async refreshStatus(api: Api): Promise<void> {
    const res = await api.request(`/v1/webhooks/${this.webhookId}`, this.key);
    if (res?.status !== 200) return;
    this.status = res.body.status;
    this.disabledAt = res.body.disabled_at === null ? null : Date.parse(res.body.disabled_at);
    this.disabledReason = res.body.disabled_reason;
  }

  /**
   * Events that reached this receiver at least DELIVERY_SETTLE_MS before the last read of its
   * delivery log, yet without an attempt listed there: the log should show every attempt.
   */
  unlogged(): { count: number; text: string } {
    const logged = new Set([...this.attempts.values()].map((a) => a.event_id));
    const ages = [...this.arrived].filter(([id, at]) => at <= this.lastPollAt - DELIVERY_SETTLE_MS && !logged.has(id)).map(([, at]) => (this.lastPollAt - at) / 1000);
    if (ages.length === 0) return { count: 0, text: '' };
    return { count: ages.length, text: `${ages.length} arrived events missing from the delivery log (arrived ${Math.max(...ages).toFixed(0)} s to ${Math.min(...ages).toFixed(0)} s before its last read)` };
  }

  describe(f: Fates): string {
    const retries = [...this.attempts.values()].filter((a) => a.attempt > 1).length;
    const unlogged = this.unlogged();
    const state = this.status === 'disabled' ? `disabled (${this.disabledReason})` : this.status;
    return (
      `${this.name} (${ANSWERS[this.behaviour]}): ${f.events} events: ${f.delivered} / ${f.retrying} / ${f.stoppedByDisable} / ${f.givenUp} / ${f.lost.length}; ` +
      `${this.attempts.size} attempts, ${retries} of them retries; ${this.requests} signed requests received, ${this.repeats} repeats` +
      `${unlogged.count > 0 ? `; ${unlogged.text}` : ''}` +
      `${this.overflows > 0 ? `, ${this.overflows} reads of its log may have missed attempts` : ''}; ${state}` +
      `${f.lost.length > 0 ? `; lost: ${f.lost.slice(0, 3).join(', ')}` : ''}`
    );
  }
}

/** Starts and registers the receivers; the one that is down is closed once registered. */
async function startReceivers(api: Api, keys: BenchKey[], onServer: (server: Server) => void): Promise<Receiver[]> {
  return Promise.all(
    RECEIVERS.map(async (behaviour, i) => {
      const receiver = new Receiver(`receiver ${String(i).padStart(2, '0')}`, behaviour, keys[i].key);
      const servers: Server[] = [];
      const base = await listen((req, res) => void receiver.receive(req, res), servers);
      const [server] = servers;
      await receiver.register(api, `${base}/hook`);
      if (behaviour === 'down') await closeServer(server);
      else onServer(server);
      return receiver;
    }),
  );
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Reads every receiver's delivery log now, then every DELIVERIES_POLL_MS until `signal` aborts:
 * all at once, so a slow API does not stretch the time between two reads of one log past
 * the 100 attempts a read shows.
 */
async function pollDeliveries(api: Api, receivers: Receiver[], signal?: AbortSignal): Promise<void> {
  do {
    await Promise.all(receivers.map((r) => r.poll(api)));
    if (signal) await pause(DELIVERIES_POLL_MS, signal);
  } while (signal && !signal.aborted);
}

/** Cumulative attempts over all receivers: delivered, retries (second attempts on), failed. */
function deliverySummary(receivers: Receiver[]): string {
  const attempts = receivers.flatMap((r) => [...r.attempts.values()]);
  const delivered = attempts.filter((a) => a.outcome === 'delivered').length;
  return `delivered ${int(delivered)}, retried ${int(attempts.filter((a) => a.attempt > 1).length)}, failed ${int(attempts.length - delivered)}`;
}

/**
 * Each event's fate per webhook: delivered, waiting for a retry in its schedule, stopped by an
 * auto-disable (documented: a disabled webhook is sent nothing), given up after the last retry,
 * or lost: out of retries too soon, a retry overdue, or never attempted although another
 * webhook was sent it while this one was enabled.
 */
function webhookFates(receivers: Receiver[], registeredAt: number, endAt: number): Map<Receiver, Fates> {
  const firstAttempt = new Map<string, number>();
  for (const a of receivers.flatMap((r) => [...r.attempts.values()])) {
    firstAttempt.set(a.event_id, Math.min(firstAttempt.get(a.event_id) ?? Infinity, Date.parse(a.at)));
  }
  const fates = new Map<Receiver, Fates>();
  for (const r of receivers) {
    const latest = new Map<string, Attempt>();
    const delivered = new Set<string>();
    for (const a of r.attempts.values()) {
      if (a.outcome === 'delivered') delivered.add(a.event_id);
      if ((latest.get(a.event_id)?.attempt ?? 0) < a.attempt) latest.set(a.event_id, a);
    }
    const f: Fates = { events: latest.size, delivered: delivered.size, retrying: 0, stoppedByDisable: 0, givenUp: 0, lost: [] };
    for (const [eventId, a] of latest) {
      if (delivered.has(eventId)) continue;
      if (r.disabledAt !== null && (a.next_retry_at === null || Date.parse(a.next_retry_at) >= r.disabledAt)) f.stoppedByDisable++;
      else if (a.next_retry_at === null && a.attempt > RETRY_DELAYS_MS.length) f.givenUp++;
      else if (a.next_retry_at !== null && Date.parse(a.next_retry_at) >= endAt - RETRY_GRACE_MS) f.retrying++;
      else f.lost.push(`${eventId} (attempt ${a.attempt}, next retry ${a.next_retry_at ?? 'none'})`);
    }
    for (const [eventId, at] of firstAttempt) {
      const checked = at >= registeredAt + DELIVERY_SETTLE_MS && at <= endAt - DELIVERY_SETTLE_MS && (r.disabledAt === null || at < r.disabledAt);
      if (!checked || latest.has(eventId)) continue;
      f.events++;
      f.lost.push(`${eventId} (never attempted)`);
    }
    fates.set(r, f);
  }
  return fates;
}

function webhookNote(receivers: Receiver[], fates: Map<Receiver, Fates>): string {
  const all = [...fates.values()];
  const sum = (f: (x: Fates) => number) => all.reduce((n, x) => n + f(x), 0);
  const failing = receivers.filter((r) => r.behaviour !== 'fast' && r.behaviour !== 'slow');
  const retried = failing.filter((r) => [...r.attempts.values()].some((a) => a.attempt > 1)).length;
  const unlogged = receivers.reduce((n, r) => n + r.unlogged().count, 0);
  const overflows = receivers.reduce((n, r) => n + r.overflows, 0);
  return (
    `${sum((x) => x.events)} events over ${receivers.length} webhooks: ${sum((x) => x.delivered)} delivered, ${sum((x) => x.retrying)} in the retry schedule, ` +
    `${sum((x) => x.stoppedByDisable)} stopped by an auto-disable, ${sum((x) => x.givenUp)} given up; ${retried} of ${failing.length} failing receivers were retried; ` +
    `${unlogged} events reached a receiver a minute or more before the last read of its delivery log yet are not in it` +
    `${overflows > 0 ? `; ${overflows} reads of a delivery log may have missed attempts (over 100 since the read before), so some of these counts are short` : ''}`
  );
}

// ---- operators and backtests --------------------------------------------------------------

/**
 * An operator with `tqa keys` on the service's data dir: creates a Pro key, times until the API
 * accepts it, and revokes every other one, which the API must refuse as soon as the command returns.
 */
class Operators {
  readonly applyMs: number[] = [];
  /** Keys whose very first GET /v1/key answered 200: applied at once, whatever that answer's latency. */
  acceptedAtFirst = 0;
  notApplied = 0;
  revoked = 0;
  /** Revoked keys whose first GET /v1/key after the command returned still answered 200. */
  revokedAccepted = 0;
  /** From the revoke command's return until GET /v1/key answered 401. */
  readonly refusedMs: number[] = [];
  notRefused = 0;
  readonly failures: string[] = [];

  constructor(
    private readonly api: Api,
    private readonly dataDir: string,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    for (let n = 0; !signal.aborted; n++) {
      try {
        const created = JSON.parse(await this.tqa(['keys', 'create', '--plan', 'pro', '--name', 'soak', '--json'])) as { id: string; key: string };
        const returned = performance.now();
        let tries = 0;
        try {
          const accepted = async () => {
            tries++;
            return (await this.api.request('/v1/key', created.key))?.status === 200;
          };
          await waitFor(accepted, 'a new key to be accepted', KEY_APPLY_TIMEOUT_MS);
          this.applyMs.push(performance.now() - returned);
          if (tries === 1) this.acceptedAtFirst++;
        } catch {
          this.notApplied++;
        }
        if (n % 2 === 1) {
          await this.tqa(['keys', 'revoke', created.id, '--json']);
          const revokeReturned = performance.now();
          this.revoked++;
          let checks = 0;
          const refused = async () => {
            const status = (await this.api.request('/v1/key', created.key))?.status;
            if (checks++ === 0 && status === 200) this.revokedAccepted++;
            return status === 401;
          };
          try {
            await waitFor(refused, 'a revoked key to be refused', KEY_APPLY_TIMEOUT_MS);
            this.refusedMs.push(performance.now() - revokeReturned);
          } catch {
            this.notRefused++;
          }
        }
      } catch (err) {
        this.failures.push((err as Error).message);
      }
      await pause(OPERATOR_PAUSE_MS, signal);
    }
  }

  summary(): string {
    if (this.applyMs.length === 0) return `applied 0${this.failures.length > 0 ? `, ${this.failures.length} commands failed` : ''}`;
    const at = (q: number) => int(percentile(this.applyMs, q));
    return (
      `applied ${this.applyMs.length} (${this.acceptedAtFirst} at the first request): p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${int(Math.max(...this.applyMs))} ms` +
      `${this.notApplied > 0 ? `, ${this.notApplied} not within ${KEY_APPLY_TIMEOUT_MS / 1000} s` : ''}; revoked ${this.revoked}, still accepted ${this.revokedAccepted}` +
      `${this.refusedMs.length > 0 ? ` (refused after at most ${int(Math.max(...this.refusedMs))} ms)` : ''}${this.notRefused > 0 ? `, ${this.notRefused} not refused within ${KEY_APPLY_TIMEOUT_MS / 1000} s` : ''}` +
      `${this.failures.length > 0 ? `; ${this.failures.length} commands failed` : ''}`
    );
  }

  verdictNote(): string {
    return `${this.summary()}${this.failures.length > 0 ? `; first failure: ${this.failures[0]}` : ''}`;
  }

  /** `node bin/tqa.js ARGS` as an operator runs it on the service's data dir; its stdout once it exits 0. */
  private async tqa(args: string[]): Promise<string> {
    const child = spawn(process.execPath, ['bin/tqa.js', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn', TQA_DATA_DIR: this.dataDir } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    if (code !== 0) throw new Error(`tqa ${args.join(' ')} exited with ${code}: ${stderr.trim().slice(-300)}`);
    return stdout;
  }
}

/** A small backtest a minute, each polled until it ends. */
class Backtests {
  done = 0;
  readonly failed: string[] = [];
  unfinished = 0;
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly api: Api,
    private readonly readers: Readers,
  ) {}

  start(key: string): void {
    const run = this.run(key).finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** Waits up to `ms` for the runs still going, then stops polling them: those count as unfinished. */
  async settle(ms: number): Promise<void> {
    await Promise.race([Promise.all(this.running), delay(ms)]);
    this.unfinished += this.running.size;
    this.stopped = true;
    await Promise.all(this.running);
  }

  summary(): string {
    return `done ${this.done}, failed ${this.failed.length}, running ${this.running.size}`;
  }

  verdictNote(): string {
    return `${this.done} done${this.failed.length > 0 ? `; ${this.failed.slice(0, 3).join('; ')}` : ''}`;
  }

  private async run(key: string): Promise<void> {
    const body = { name: 'soak', rules: [{ field: 'momentum', op: '>=', value: 60 }], horizon: '1h', from: new Date(Date.now() - 6 * 3_600_000).toISOString() };
    const queued = await this.api.request('/v1/quant/backtests', key, { method: 'POST', body });
    if (queued?.status !== 202) {
      this.failed.push(`POST answered ${queued?.status ?? 'nothing'}`);
      return;
    }
    const id = queued.body.id as string;
    this.readers.addOwned('backtests', id, key);
    while (!this.stopped) {
      const res = await this.api.request(`/v1/quant/backtests/${id}`, key);
      const status = res?.status === 200 ? (res.body.status as string) : null;
      if (status === 'done') this.done++;
      else if (status !== null && (TERMINAL_RUN_STATUSES as readonly string[]).includes(status)) this.failed.push(`${id} ${status}: ${res!.body.reason}`);
      if (status !== null && (TERMINAL_RUN_STATUSES as readonly string[]).includes(status)) return;
      await delay(BACKTEST_POLL_MS);
    }
  }
}

// ---- helpers ------------------------------------------------------------------------------

/** Sleeps `ms`, or less when `signal` aborts first. */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (ms > 0) await delay(ms, undefined, { signal }).catch(() => undefined);
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** Least-squares slope of per-minute samples, per hour. */
function slopePerHour(samples: number[]): number {
  const n = samples.length;
  const meanX = (n - 1) / 2;
  const meanY = samples.reduce((a, b) => a + b, 0) / n;
  const cov = samples.reduce((s, y, x) => s + (x - meanX) * (y - meanY), 0);
  const varX = samples.reduce((s, _y, x) => s + (x - meanX) ** 2, 0);
  return (cov / varX) * 60;
}

function formatTally(counts: Map<string, number>): string {
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([what, n]) => `${what}×${int(n)}`)
    .join(' ');
}

function tally(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${n} ${v}`).join(', ');
}
