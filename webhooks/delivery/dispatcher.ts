import { appendEvent } from '../../projections/control-events.ts';
import type { EventLog, LogConsumer, LogRecord } from '../../infra/log/port.ts';
import type { Logger } from '../../infra/logging.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { reachesKey, type PublicEvent, type WebhookDelivery, type WebhookEvent } from '../../schemas/records.ts';
import type { UrlPolicy } from '../address.ts';
import { appendWebhookEvent, nextEvent } from '../commands.ts';
import { deliveryHeaders, eventBody, newDeliveryId } from '../payload.ts';
import type { SecretBox } from '../secret-box.ts';
import { postSigned, type Resolver } from '../sender.ts';
import { AUTO_DISABLE_AFTER, nextRetryAt } from './schedule.ts';

/**
 * Delivers public events to webhooks (spec 6.2–6.4). Its whole state is rebuilt from the
 * log: webhooks from control.webhooks, and every attempt from webhooks.deliveries, which it
 * reads to the end before it reads a public event. An event is sent to a webhook only when
 * no attempt of it is recorded, so a replay of any topic never re-sends; the consumer's
 * offset on public.events is committed only below events whose first attempts are all
 * recorded, so a crash (kill -9 included) re-sends at most what was in flight, never loses
 * one. Pending retries are recorded attempts with a next-retry time, so they survive too.
 *
 * A webhook receives the events of its types that happened (event time) after it was
 * created or last re-enabled, of its dataset, and a manual cohort's only when it is the
 * owner key's. Sends run at most `maxPerWebhook` at a time per webhook and `maxConcurrent`
 * in all, so a slow receiver holds only its own slots.
 */

export interface DispatcherOptions {
  log: EventLog;
  codec: Codec;
  logger: Logger;
  secrets: SecretBox;
  policy: UrlPolicy;
  resolve?: Resolver;
  ca?: string;
  /** Epoch ms: when retries are due and what attempts record; injected by tests. */
  now?: () => number;
  /** How often due retries, the control topics and the commit point are looked at. */
  tickMs?: number;
  maxConcurrent?: number;
  maxPerWebhook?: number;
}

export const GROUP_ID = 'webhooks';

/**
 * How long a rotated-out signing secret still signs deliveries, beside the new one: a receiver
 * deploys the new secret meanwhile and never refuses a genuine delivery (as Stripe rolls them).
 */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

interface Hook {
  current: WebhookEvent;
  /** The secret a rotation replaced, valid until `until` (event time of the rotation + ROTATION_OVERLAP_MS). */
  previous: { sealedSecret: string; until: number } | null;
  /** Failed attempts (tests excluded) since the last delivered one or the last (re-)enable. */
  streak: number;
  disabling: boolean;
}

interface AttemptState {
  attempt: number;
  nextRetryAt: number | null;
  /** The resend command the latest attempts answer, and the attempt it started at: its retries count from there. */
  resendOf: number | null;
  seriesStart: number;
}

interface Job {
  webhookId: string;
  event: PublicEvent;
  attempt: number;
  /** For a first attempt: the public.events record whose commit waits for it. */
  source?: { partition: number; offset: number };
  /** The webhook version of the resend command this job answers. */
  resendOf?: number;
  /** The attempt its series of retries started at: 1, or the first attempt of a resend. */
  seriesStart: number;
}

const attemptKey = (webhookId: string, eventId: string) => `${webhookId} ${eventId}`;

export class Dispatcher {
  private readonly hooks = new Map<string, Hook>();
  private readonly attempts = new Map<string, AttemptState>();
  /** Keys of attempts neither delivered nor out of retries: what a tick looks at. */
  private readonly unsettled = new Set<string>();
  /** Bodies of events with a retry pending or an attempt queued. */
  private readonly events = new Map<string, PublicEvent>();
  private readonly queued = new Set<string>();
  private readonly queues = new Map<string, Job[]>();
  private readonly running = new Map<string, number>();
  private runningTotal = 0;
  /** Per public.events partition: offsets read and not yet fully recorded, with how many first attempts each waits for. */
  private readonly outstanding = new Map<number, Map<number, number>>();
  private readonly nextOffset = new Map<number, number>();
  private readonly positions = new Map<string, number>();
  private readonly own = new Set<string>();
  /** Resend commands not yet turned into jobs, and `<webhook> <event> <version>` of every resend attempt recorded. */
  private readonly resends: WebhookEvent[] = [];
  private readonly resent = new Set<string>();
  private consumer: LogConsumer | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopping = false;
  private ticking: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly now: () => number;

  constructor(private readonly options: DispatcherOptions) {
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    await this.catchUp(TOPICS.webhooks.name);
    await this.catchUp(TOPICS.webhookDeliveries.name);
    await this.loadPendingEvents();
    const consumer = this.options.log.consumer({ groupId: GROUP_ID, topics: [TOPICS.publicEvents.name], fromBeginning: true, autoCommit: false });
    this.consumer = consumer;
    void consumer
      .run(async (batch) => {
        await this.catchUp(TOPICS.webhooks.name);
        for (const record of batch.records) await this.onPublicEvent(record);
      })
      .catch((err: unknown) => this.options.logger.error({ err }, 'webhook consumer failed'));
    this.timer = setInterval(() => void this.tick(), this.options.tickMs ?? 250);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.consumer?.stop();
    await Promise.all([...this.inFlight]);
  }

  /** Due retries, webhook changes and the commit point; also called by tests after moving the clock. */
  async tick(): Promise<void> {
    // One at a time: two reads of the attempts topic from the same position would count attempts twice.
    while (this.ticking) await this.ticking;
    if (this.stopping) return;
    this.ticking = this.tickOnce();
    try {
      await this.ticking;
    } finally {
      this.ticking = null;
    }
  }

  private async tickOnce(): Promise<void> {
    try {
      await this.catchUp(TOPICS.webhooks.name);
      await this.catchUp(TOPICS.webhookDeliveries.name);
      const now = this.now();
      for (const key of this.unsettled) {
        const state = this.attempts.get(key)!;
        if (state.nextRetryAt === null || state.nextRetryAt > now || this.queued.has(key)) continue;
        const [webhookId, eventId] = key.split(' ');
        const event = this.events.get(eventId);
        const hook = this.hooks.get(webhookId);
        if (event === undefined || hook === undefined || !this.accepts(hook, event)) continue;
        this.enqueue({ webhookId, event, attempt: state.attempt + 1, resendOf: state.resendOf ?? undefined, seriesStart: state.seriesStart });
      }
      if (this.resends.length > 0) await this.scheduleResends(this.resends.splice(0));
      // An event's body is kept while some webhook may still need it (several share one event).
      const needed = new Set([...this.unsettled, ...this.queued].map((key) => key.split(' ')[1]));
      for (const id of this.events.keys()) if (!needed.has(id)) this.events.delete(id);
      await this.commit();
    } catch (err) {
      this.options.logger.error({ err }, 'webhook tick failed');
    }
  }

  /** Whether the webhook may receive the event now: enabled, of its types, dataset and audience. */
  private accepts(hook: Hook, e: PublicEvent): boolean {
    const w = hook.current;
    return (
      w.status === 'enabled' &&
      !hook.disabling &&
      w.dataset === e.dataset &&
      (w.events as readonly string[]).includes(e.type) &&
      reachesKey(e, w.keyId, w.teamId)
    );
  }

  /** Whether a new event goes to the webhook: it also happened after the webhook was (re-)enabled. */
  private wants(hook: Hook, e: PublicEvent): boolean {
    return this.accepts(hook, e) && e.ts >= hook.current.enabledAt;
  }

  private async onPublicEvent(record: LogRecord): Promise<void> {
    if (record.value === null) return;
    const event = (await this.options.codec.decode(record.topic, record.value)) as PublicEvent;
    const partition = record.partition;
    this.nextOffset.set(partition, record.offset + 1);
    let waiting = 0;
    for (const [webhookId, hook] of this.hooks) {
      const key = attemptKey(webhookId, event.eventId);
      if (!this.wants(hook, event) || this.attempts.has(key) || this.queued.has(key)) continue;
      this.enqueue({ webhookId, event, attempt: 1, source: { partition, offset: record.offset }, seriesStart: 1 });
      waiting++;
    }
    if (waiting > 0) {
      let open = this.outstanding.get(partition);
      if (!open) this.outstanding.set(partition, (open = new Map()));
      open.set(record.offset, waiting);
    }
  }

  private enqueue(job: Job): void {
    this.queued.add(attemptKey(job.webhookId, job.event.eventId));
    this.events.set(job.event.eventId, job.event);
    let queue = this.queues.get(job.webhookId);
    if (!queue) this.queues.set(job.webhookId, (queue = []));
    queue.push(job);
    this.pump();
  }

  /** Starts queued jobs while their webhook and the whole dispatcher have free slots. */
  private pump(): void {
    const perHook = this.options.maxPerWebhook ?? 4;
    const total = this.options.maxConcurrent ?? 64;
    for (const [webhookId, queue] of this.queues) {
      while (queue.length > 0 && (this.running.get(webhookId) ?? 0) < perHook && this.runningTotal < total) {
        const job = queue.shift()!;
        this.running.set(webhookId, (this.running.get(webhookId) ?? 0) + 1);
        this.runningTotal++;
        const done = this.send(job)
          .catch((err: unknown) => this.options.logger.error({ err, webhookId }, 'webhook delivery not recorded'))
          .finally(() => {
            this.running.set(webhookId, this.running.get(webhookId)! - 1);
            this.runningTotal--;
            this.inFlight.delete(done);
            this.pump();
          });
        this.inFlight.add(done);
      }
      if (queue.length === 0) this.queues.delete(webhookId);
    }
  }

  private async send(job: Job): Promise<void> {
    const key = attemptKey(job.webhookId, job.event.eventId);
    const hook = this.hooks.get(job.webhookId);
    if (hook === undefined || !this.accepts(hook, job.event)) {
      // Deleted or disabled while queued: nothing is sent, nothing waits for it.
      this.queued.delete(key);
      this.release(job);
      return;
    }
    const { secrets, policy, resolve, ca } = this.options;
    const w = hook.current;
    const deliveryId = newDeliveryId();
    const body = eventBody(job.event);
    const now = this.now();
    const valid = [w.sealedSecret, ...(hook.previous !== null && now < hook.previous.until ? [hook.previous.sealedSecret] : [])];
    const headers = deliveryHeaders(job.event.type, deliveryId, valid.map((sealed) => secrets.open(sealed, w.webhookId)), Math.floor(now / 1000), body);
    const result = await postSigned(w.url, body, headers, { policy, resolve, ca });
    const ts = this.now();
    const record: WebhookDelivery = {
      deliveryId,
      webhookId: w.webhookId,
      eventId: job.event.eventId,
      eventType: job.event.type,
      attempt: job.attempt,
      ts,
      outcome: result.delivered ? 'delivered' : 'failed',
      httpStatus: result.status,
      latencyMs: result.latencyMs,
      error: result.error?.slice(0, 500) ?? null,
      nextRetryAt: result.delivered ? null : nextRetryAt(job.attempt - job.seriesStart + 1, ts),
      test: false,
      resendOf: job.resendOf ?? null,
    };
    this.own.add(deliveryId);
    await appendEvent(this.options.log, this.options.codec, TOPICS.webhookDeliveries.name, w.webhookId, record);
    this.apply(record);
    this.queued.delete(key);
    this.release(job);
    if (!result.delivered && hook.streak >= AUTO_DISABLE_AFTER && hook.current.status === 'enabled' && !hook.disabling) {
      hook.disabling = true;
      const reason = `${hook.streak} consecutive failed deliveries; last: ${record.error ?? `HTTP ${record.httpStatus}`}`.slice(0, 500);
      await appendWebhookEvent(this.options.log, this.options.codec, nextEvent(hook.current, 'disable', ts, { status: 'disabled', disabledReason: reason }));
    }
  }

  /** A first attempt is recorded: its public event no longer holds the commit back. */
  private release(job: Job): void {
    if (!job.source) return;
    const open = this.outstanding.get(job.source.partition);
    const left = (open?.get(job.source.offset) ?? 1) - 1;
    if (left > 0) open!.set(job.source.offset, left);
    else open?.delete(job.source.offset);
  }

  private async commit(): Promise<void> {
    if (!this.consumer) return;
    const offsets = [...this.nextOffset].map(([partition, next]) => {
      const open = [...(this.outstanding.get(partition)?.keys() ?? [])];
      return { topic: TOPICS.publicEvents.name, partition, offset: open.length > 0 ? Math.min(...open) : next };
    });
    if (offsets.length > 0) await this.consumer.commit(offsets);
  }

  private apply(d: WebhookDelivery): void {
    if (d.test) return;
    const key = attemptKey(d.webhookId, d.eventId);
    if (d.resendOf !== null) this.resent.add(`${key} ${d.resendOf}`);
    const known = this.attempts.get(key);
    if (known === undefined || d.attempt >= known.attempt) {
      const settled = d.outcome === 'delivered' || d.nextRetryAt === null;
      const newSeries = d.resendOf !== null && d.resendOf !== known?.resendOf;
      const seriesStart = newSeries ? d.attempt : (known?.seriesStart ?? 1);
      this.attempts.set(key, { attempt: d.attempt, nextRetryAt: d.nextRetryAt, resendOf: d.resendOf, seriesStart });
      if (settled) this.unsettled.delete(key);
      else this.unsettled.add(key);
    }
    const hook = this.hooks.get(d.webhookId);
    if (hook === undefined || d.ts < hook.current.enabledAt) return;
    hook.streak = d.outcome === 'delivered' ? 0 : hook.streak + 1;
  }

  private applyWebhook(w: WebhookEvent): void {
    const hook = this.hooks.get(w.webhookId);
    if (w.status === 'deleted') {
      this.hooks.delete(w.webhookId);
      return;
    }
    if (w.action === 'resend' && (hook === undefined || w.version > hook.current.version)) this.resends.push(w);
    if (hook === undefined) this.hooks.set(w.webhookId, { current: w, previous: null, streak: 0, disabling: false });
    else if (w.version > hook.current.version) {
      if (w.enabledAt !== hook.current.enabledAt) hook.streak = 0;
      if (w.action === 'rotate_secret') hook.previous = { sealedSecret: hook.current.sealedSecret, until: w.ts + ROTATION_OVERLAP_MS };
      hook.current = w;
      hook.disabling = false;
    }
  }

  /** Reads a control topic from where this dispatcher left it to its end. */
  private async catchUp(topic: string): Promise<void> {
    const { log, codec } = this.options;
    for (const { partition, offset: end } of await log.endOffsets(topic)) {
      const id = `${topic}#${partition}`;
      let from = this.positions.get(id) ?? (await log.startOffsets(topic)).find((p) => p.partition === partition)?.offset ?? 0;
      while (from < end) {
        const records = await log.read(topic, partition, from, 1000);
        if (records.length === 0) break;
        for (const r of records) {
          if (r.value === null) continue;
          const value = await codec.decode(topic, r.value);
          if (topic === TOPICS.webhooks.name) this.applyWebhook(value as WebhookEvent);
          else if (!this.own.delete((value as WebhookDelivery).deliveryId)) this.apply(value as WebhookDelivery);
        }
        from = records.at(-1)!.offset + 1;
      }
      this.positions.set(id, from);
    }
  }

  /** After a restart: the bodies of events with a retry pending, read back from public.events. */
  private async loadPendingEvents(): Promise<void> {
    const wanted = new Set<string>();
    for (const key of this.unsettled) wanted.add(key.split(' ')[1]);
    if (wanted.size === 0) return;
    await this.scanPublicEvents((event) => {
      if (wanted.delete(event.eventId)) this.events.set(event.eventId, event);
      return wanted.size > 0;
    });
  }

  /**
   * Resend commands: each matching retained event the webhook accepts is sent again, as the
   * next attempt, unless an attempt answering the same command is recorded (a restart
   * re-reads the commands and finishes only what was left).
   */
  private async scheduleResends(commands: WebhookEvent[]): Promise<void> {
    await this.scanPublicEvents((event) => {
      for (const command of commands) {
        const hook = this.hooks.get(command.webhookId);
        const matches = command.resendEventId !== null ? event.eventId === command.resendEventId : event.ts >= command.resendSince!;
        const key = attemptKey(command.webhookId, event.eventId);
        if (!matches || hook === undefined || !this.accepts(hook, event) || this.resent.has(`${key} ${command.version}`) || this.queued.has(key)) continue;
        const attempt = (this.attempts.get(key)?.attempt ?? 0) + 1;
        this.enqueue({ webhookId: command.webhookId, event, attempt, resendOf: command.version, seriesStart: attempt });
      }
      return true;
    });
  }

  /** Every retained public event in offset order per partition, until `visit` returns false. */
  private async scanPublicEvents(visit: (event: PublicEvent) => boolean): Promise<void> {
    const { log, codec } = this.options;
    const topic = TOPICS.publicEvents.name;
    const ends = await log.endOffsets(topic);
    for (const { partition, offset } of await log.startOffsets(topic)) {
      const end = ends.find((e) => e.partition === partition)?.offset ?? 0;
      for (let from = offset; from < end; ) {
        const records = await log.read(topic, partition, from, 1000);
        if (records.length === 0) break;
        for (const r of records) {
          if (r.value !== null && !visit((await codec.decode(topic, r.value)) as PublicEvent)) return;
        }
        from = records.at(-1)!.offset + 1;
      }
    }
  }
}
