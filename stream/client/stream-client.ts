import { setTimeout as delay } from 'node:timers/promises';
import WebSocket from 'ws';

/**
 * The reference client of the WebSocket stream (package export
 * `token-quant-analytics/stream-client`). It depends on `ws` only, so it can be copied.
 *
 * Before every connect it asks GET /v1/stream/info where the stream is (the address can
 * change), authenticates with the key, subscribes, and on every reconnect subscribes again
 * from the cursor of the last event it got, so nothing is missed or repeated. It reconnects
 * with backoff when the server goes away (1001), the connection drops (1006), the network
 * fails or the stream is unavailable; it stops with a StreamClientError when the key is
 * refused (401, 403), revoked (4401) or its plan no longer includes the stream (4402).
 */

export interface StreamSubscription {
  /** Stream event names: signal.created, signal.ended, score.updated, cohort.convergence, narrative.shift. */
  events: string[];
  /** `$SYMBOL` or `tk_<id>`; none for every token. */
  tokens?: string[];
}

/** An `event` frame as the server sends it. */
export interface StreamEventFrame {
  type: 'event';
  id: string;
  event: string;
  created_at: string;
  dataset: string;
  cursor: string;
  data: unknown;
}

/** Something worth telling the user that does not stop the client. */
export type StreamNotice =
  | { kind: 'connected'; url: string; connectionId: string }
  | { kind: 'subscribed'; subscriptionId: string; events: string[]; resumed: boolean }
  | { kind: 'reconnecting'; inMs: number; reason: string }
  | { kind: 'resume_refused'; message: string }
  | { kind: 'warning'; code: string; message: string }
  | { kind: 'error'; code: string; message: string };

export interface StreamClientOptions {
  /** Base URL of the REST API, e.g. http://localhost:8080; /v1/stream/info is asked there. */
  api: string;
  /** An API key with the scope stream:read. */
  key: string;
  subscriptions: StreamSubscription[];
  onEvent: (frame: StreamEventFrame) => void;
  onNotice?: (notice: StreamNotice) => void;
  /** Start after this cursor instead of from now. */
  resume?: string;
  /** Reconnect delays: doubling from `initialMs` up to `maxMs`, each drawn between half and all of it. */
  backoff?: { initialMs?: number; maxMs?: number };
}

/** Why the client stopped for good: `code` is the HTTP status of a refused upgrade or the close code. */
export class StreamClientError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'StreamClientError';
  }
}

export interface StreamClient {
  /** The cursor of the last event received (or of the first subscription), to resume from later. */
  readonly cursor: string | null;
  /** Settles when the client stops: resolves after close(), rejects with a StreamClientError. */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

const FATAL_CLOSES: Record<number, string> = {
  4401: 'the API key has been revoked',
  4402: "the key's plan no longer includes the stream",
};
const FATAL_STATUSES = new Set([401, 403]);

export function connectStream(options: StreamClientOptions): StreamClient {
  const notice = options.onNotice ?? (() => undefined);
  const initialMs = options.backoff?.initialMs ?? 500;
  const maxMs = options.backoff?.maxMs ?? 30_000;
  let cursor: string | null = options.resume ?? null;
  let socket: WebSocket | null = null;
  let closing = false;
  let wake: () => void = () => undefined;

  /** One connection, from the info question to its close; resolves with why it ended, rejects when fatal. */
  async function session(): Promise<{ healthy: boolean; reason: string }> {
    let info: { available: boolean; url: string | null; message?: string | null };
    try {
      const res = await fetch(new URL('/v1/stream/info', options.api));
      if (!res.ok) return { healthy: false, reason: `GET /v1/stream/info answered ${res.status}` };
      info = (await res.json()) as typeof info;
    } catch (err) {
      return { healthy: false, reason: `GET /v1/stream/info failed: ${(err as Error).message}` };
    }
    if (closing) return { healthy: false, reason: 'closed' };
    if (!info.available || info.url === null) return { healthy: false, reason: info.message ?? 'the stream is not available' };
    const url = info.url;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${options.key}` } });
      socket = ws;
      let welcomed = false;
      let watchdog: NodeJS.Timeout | undefined;
      /** A server silent for two ping rounds is gone even if TCP has not noticed. */
      const heard = (pingSec: number) => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => ws.terminate(), pingSec * 2_000 + 1_000);
      };
      let pingSec = 25;
      /** Subscribe frames awaiting their answer by ref, and whether they resumed. */
      const pending = new Map<string, { sub: StreamSubscription; resumed: boolean }>();
      const subscribe = (sub: StreamSubscription, index: number, from: string | null) => {
        const id = `s${index}`;
        pending.set(id, { sub, resumed: from !== null });
        ws.send(JSON.stringify({ type: 'subscribe', id, events: sub.events, tokens: sub.tokens ?? [], ...(from === null ? {} : { resume: from }) }));
      };
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const message = errorMessage(body) ?? `the upgrade was refused with ${status}`;
          if (FATAL_STATUSES.has(status)) reject(new StreamClientError(message, status));
          else resolve({ healthy: false, reason: message });
        });
      });
      ws.on('ping', () => heard(pingSec));
      ws.on('message', (data) => {
        heard(pingSec);
        const frame = JSON.parse(String(data)) as { type: string; [field: string]: any };
        switch (frame.type) {
          case 'welcome':
            welcomed = true;
            pingSec = frame.limits?.ping_interval_sec ?? pingSec;
            heard(pingSec);
            notice({ kind: 'connected', url, connectionId: frame.connection_id });
            options.subscriptions.forEach((sub, i) => subscribe(sub, i, cursor));
            return;
          case 'subscribed':
            notice({ kind: 'subscribed', subscriptionId: frame.subscription_id, events: frame.events, resumed: pending.get(frame.ref)?.resumed ?? false });
            pending.delete(frame.ref);
            cursor ??= frame.cursor ?? null;
            return;
          case 'event':
            cursor = frame.cursor;
            options.onEvent(frame as unknown as StreamEventFrame);
            return;
          case 'warning':
            notice({ kind: 'warning', code: frame.code, message: frame.message });
            return;
          case 'error': {
            const sub = frame.ref === undefined ? undefined : pending.get(frame.ref)?.sub;
            const refusedResume = sub !== undefined && frame.details?.issues?.some((i: { path?: string }) => i.path === 'body.resume');
            if (refusedResume) {
              // The cursor is too old or foreign: what came in between is lost to the stream (resync over REST).
              notice({ kind: 'resume_refused', message: frame.message });
              subscribe(sub, Number(frame.ref.slice(1)), null);
            } else notice({ kind: 'error', code: frame.code, message: frame.message });
            return;
          }
        }
      });
      ws.on('error', () => undefined); // the close that follows says what happens next
      ws.on('close', (code, reason) => {
        clearTimeout(watchdog);
        socket = null;
        if (code in FATAL_CLOSES) reject(new StreamClientError(`${FATAL_CLOSES[code]} (${code})`, code));
        else resolve({ healthy: welcomed, reason: `closed with ${code}${reason.length > 0 ? `: ${String(reason)}` : ''}` });
      });
    });
  }

  const done = (async () => {
    let backoffMs = initialMs;
    while (!closing) {
      const { healthy, reason } = await session();
      if (closing) return;
      if (healthy) backoffMs = initialMs;
      const inMs = Math.round(backoffMs * (0.5 + Math.random() / 2));
      notice({ kind: 'reconnecting', inMs, reason });
      await Promise.race([delay(inMs), new Promise<void>((resolve) => (wake = resolve))]);
      backoffMs = Math.min(backoffMs * 2, maxMs);
    }
  })();

  return {
    get cursor() {
      return cursor;
    },
    done,
    async close() {
      closing = true;
      wake();
      (socket as WebSocket | null)?.close(1000);
      await done.catch(() => undefined);
    },
  };
}

function errorMessage(body: string): string | null {
  try {
    return (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? null;
  } catch {
    return null;
  }
}
