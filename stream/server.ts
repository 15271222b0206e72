import { createServer, STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { ApiError, errorBody } from '../api/errors.ts';
import { KeyService } from '../api/keys.ts';
import { newRequestId } from '../api/middleware/request-id.ts';
import { STREAM_EVENTS, STREAM_LIMITS } from '../api/schemas/meta.ts';
import type { EventLog } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { DATASET } from '../presenters/resource.ts';
import type { ProjectionTables } from '../projections/tables.ts';
import type { Codec } from '../schemas/codec.ts';
import { reachesKey, type PublicEvent } from '../schemas/records.ts';
import { authenticateUpgrade } from './auth.ts';
import { CatchUps } from './catch-up.ts';
import { Connection } from './connection.ts';
import { encodeCursor } from './cursor.ts';
import { PublicEventFeed } from './feed.ts';
import { eventFrame, newId } from './protocol.ts';
import { handleFrame } from './session.ts';
import { SubscriptionIndex } from './subscriptions.ts';

export const STREAM_PATH = '/v1/stream';
const NO_LAGGING = new Map<string, number[]>();

export interface StreamServerOptions {
  log: EventLog;
  codec: Codec;
  store: AnalyticalStore<ProjectionTables>;
  logger: Logger;
  port: number;
  host?: string;
  now?: () => number;
  /** The keys, when the process holds them for an API beside the stream too; made from the log when absent. */
  keys?: KeyService;
  /** Ping round period (spec: 25 s); a client silent for a whole round is closed. */
  pingIntervalMs?: number;
  /** How often connected keys are looked up again, so a revoke or a plan change closes their sockets. */
  keyCheckMs?: number;
  maxBufferedBytes?: number;
  pollMs?: number;
  /** How far back a resume cursor may be (default RESUME_WINDOW_MS, 24 h). */
  resumeWindowMs?: number;
}

export interface StreamServer {
  port: number;
  /** Open connections, for tests and the presence announcement. */
  connectionCount(): number;
  /** Subscriptions over all connections, for tests: a subscribe has been applied once it counts. */
  subscriptionCount(): number;
  /** Graceful: closes every socket with 1001 so clients reconnect elsewhere. */
  stop(): Promise<void>;
}

const SHUTDOWN_GRACE_MS = 2_000;

/** The WebSocket stream (spec 6.5) on its own port: auth before the upgrade, then sessions fed from public.events. */
export async function startStreamServer(options: StreamServerOptions): Promise<StreamServer> {
  const { logger } = options;
  const now = options.now ?? Date.now;
  const keys = options.keys ?? new KeyService({ log: options.log, codec: options.codec, now });
  const maxBufferedBytes = options.maxBufferedBytes ?? 1024 * 1024;
  const index = new SubscriptionIndex<Connection>();
  const connections = new Set<Connection>();
  /** Open sockets per key id, for the per-key limit. */
  const perKey = new Map<string, number>();
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const http: Server = createServer((_req, res) => {
    const body = JSON.stringify(errorBody(new ApiError('NOT_FOUND', `open a WebSocket at ${STREAM_PATH}`), newRequestId()));
    res.writeHead(404, { 'Content-Type': 'application/json' }).end(body);
  });

  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void upgrade(req, socket, head));

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const requestId = newRequestId();
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'ws://stream');
    try {
      if (url.pathname !== STREAM_PATH) throw new ApiError('NOT_FOUND', `open the WebSocket at ${STREAM_PATH}`);
      const { key, hash } = await authenticateUpgrade(req, url, keys);
      const open = perKey.get(key.id) ?? 0;
      if (open >= STREAM_LIMITS.maxConnectionsPerKey) {
        throw new ApiError('LIMIT_REACHED', `this key already has ${open} open connections, the most allowed`);
      }
      // handleUpgrade calls back synchronously (no verifyClient), so accept() counts the socket before another upgrade is checked.
      wss.handleUpgrade(req, socket, head, (ws) => accept(ws, key, hash, requestId));
    } catch (err) {
      const apiError = err instanceof ApiError ? err : new ApiError('INTERNAL', 'unexpected error; retry');
      // The path only: a ?key= in the query must never reach a log line.
      if (!(err instanceof ApiError)) logger.error({ err, requestId, path: url.pathname }, 'stream upgrade failed');
      refuse(socket, apiError, requestId);
    }
  }

  function accept(ws: WebSocket, key: Connection['key'], hash: string, requestId: string): void {
    const conn = new Connection(newId('conn'), ws, key, hash, { maxBufferedBytes, now });
    connections.add(conn);
    perKey.set(key.id, (perKey.get(key.id) ?? 0) + 1);
    ws.on('pong', () => (conn.alive = true));
    ws.on('message', (data: RawData) => void handleFrame(conn, rawText(data), { index, store: options.store, logger, catchUps }));
    ws.on('error', (err) => logger.debug({ err, connectionId: conn.id }, 'stream socket error'));
    ws.on('close', () => {
      connections.delete(conn);
      for (const sub of conn.subscriptions.values()) index.remove(sub);
      const left = (perKey.get(key.id) ?? 1) - 1;
      if (left === 0) perKey.delete(key.id);
      else perKey.set(key.id, left);
    });
    conn.send({
      type: 'welcome',
      connection_id: conn.id,
      request_id: requestId,
      dataset: DATASET,
      livemode: true,
      events: STREAM_EVENTS,
      limits: {
        max_subscriptions: STREAM_LIMITS.maxSubscriptions,
        max_tokens_per_subscription: STREAM_LIMITS.maxTokensPerSubscription,
        ping_interval_sec: (options.pingIntervalMs ?? STREAM_LIMITS.pingIntervalSec * 1000) / 1000,
      },
      key: { id: key.id, name: key.name },
    });
  }

  function onEvent(e: PublicEvent): void {
    if (e.dataset !== DATASET) return;
    const recipients = index.recipients(e);
    if (recipients.size === 0) return;
    // Built at most once, for the first live recipient: the feed's positions right after this event.
    let frame: string | null = null;
    for (const conn of recipients) {
      if (conn.catchingUp !== null || !reachesKey(e, conn.key.id, conn.key.team?.id ?? null)) continue;
      frame ??= eventFrame(e, encodeCursor({ issuedAt: now(), positions: feed.positions(), lagging: NO_LAGGING }));
      conn.sendEvent(frame, e.eventId);
    }
  }

  const pingTimer = setInterval(() => {
    for (const conn of connections) {
      if (!conn.alive) {
        conn.socket.terminate();
        continue;
      }
      conn.alive = false;
      conn.socket.ping();
      conn.send({ type: 'ping', ts: new Date(now()).toISOString() });
    }
  }, options.pingIntervalMs ?? STREAM_LIMITS.pingIntervalSec * 1000);

  let checking = false;
  const keyTimer = setInterval(() => {
    if (checking) return;
    checking = true;
    void closeRevoked().finally(() => (checking = false));
  }, options.keyCheckMs ?? 1_000);

  /**
   * Every plan includes the stream (spec 5, 6.5: it needs the scope stream:read only), so what a
   * plan change can take away is that scope: 4402 then, 4401 for a revoked key.
   */
  async function closeRevoked(): Promise<void> {
    const byHash = new Map<string, Connection[]>();
    for (const conn of connections) byHash.set(conn.keyHash, [...(byHash.get(conn.keyHash) ?? []), conn]);
    for (const [hash, conns] of byHash) {
      try {
        const key = await keys.findByHash(hash);
        if (key !== null && key.revokedAt === null && key.scopes.includes('stream:read')) continue;
        const [code, reason] = key === null || key.revokedAt !== null ? [4401, 'the API key has been revoked'] : [4402, "the key's plan no longer includes the stream (scope stream:read)"];
        for (const conn of conns) conn.socket.close(code, reason);
      } catch (err) {
        logger.warn({ err }, 'stream key check failed; keeping connections');
      }
    }
  }

  const pollMs = options.pollMs ?? 50;
  const feed = new PublicEventFeed({ log: options.log, codec: options.codec, logger, pollMs, onEvent });
  const catchUps = new CatchUps({ log: options.log, codec: options.codec, logger, feed, now, pollMs, maxBufferedBytes, windowMs: options.resumeWindowMs });
  await feed.start();
  try {
    await new Promise<void>((resolve, reject) => {
      http.once('error', reject);
      http.listen(options.port, options.host, () => resolve());
    });
  } catch (err) {
    // Not listening (the port is taken): what started already would keep the process alive.
    clearInterval(pingTimer);
    clearInterval(keyTimer);
    await feed.stop();
    await catchUps.stop();
    throw err;
  }

  return {
    port: (http.address() as AddressInfo).port,
    connectionCount: () => connections.size,
    subscriptionCount: () => [...connections].reduce((n, conn) => n + conn.subscriptions.size, 0),
    async stop() {
      clearInterval(pingTimer);
      clearInterval(keyTimer);
      await feed.stop();
      const caughtUp = catchUps.stop();
      const closed = [...connections].map((conn) => new Promise((resolve) => conn.socket.once('close', resolve)));
      for (const conn of connections) conn.socket.close(1001, 'the stream server is shutting down');
      const grace = setTimeout(() => {
        for (const conn of connections) conn.socket.terminate();
      }, SHUTDOWN_GRACE_MS);
      await Promise.all(closed);
      clearTimeout(grace);
      await caughtUp;
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function rawText(data: RawData): string {
  return Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
}

/** Refuses an upgrade with the spec's error body, as the REST API would answer. */
function refuse(socket: Duplex, err: ApiError, requestId: string): void {
  const body = JSON.stringify(errorBody(err, requestId));
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n` +
      body,
  );
}
