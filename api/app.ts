import type { Server } from 'node:http';
import Koa from 'koa';
import { consoleFiles } from './console-files.ts';
import type { Logger } from '../infra/logging.ts';
import type { EventLog } from '../infra/log/port.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import type { ProjectionTables } from '../projections/tables.ts';
import type { ApiRoute } from './http/route.ts';
import { answerMalformedRequests } from './http/malformed-requests.ts';
import { mountRoutes } from './http/router.ts';
import { KeyService } from './keys.ts';
import { authenticate } from './middleware/auth.ts';
import { errorHandler } from './middleware/errors.ts';
import { rateLimit } from './middleware/rate-limit.ts';
import { serverTiming } from './middleware/server-timing.ts';
import { requestId } from './middleware/request-id.ts';
import type { WebhookDeps } from './routes/deps.ts';
import { apiRoutes } from './routes/index.ts';
import type { Processing } from './schemas/meta.ts';
import type { StreamDirectory } from './stream-presence.ts';
import type { Codec } from '../schemas/codec.ts';
import { TokenDirectory } from './services/token-directory.ts';

export interface ApiDeps {
  log: EventLog;
  store: AnalyticalStore<ProjectionTables>;
  logger: Logger;
  startedAt: number;
  /** The keys, when the process holds them for a stream server beside the API too; made from the log when absent. */
  keys?: KeyService;
  /** The clock of the key cache, the rate limiter and the routes; injected by tests to move time. */
  now?: () => number;
  /** What the webhook endpoints write with; without it they answer 503. */
  webhooks?: WebhookDeps;
  /** Running stream instances, from their heartbeats on the log; without it the stream is announced as unavailable. */
  streams?: StreamDirectory;
  /** The codec of the log's records: the keys are read from the log, and some endpoints append control events. */
  codec: Codec;
  /** The last measured lag of the processors and projections, for /v1/health. */
  processing?: () => Processing | null;
  /** Routes mounted after the API's own (tests use it for stand-ins of later endpoints). */
  extraRoutes?: readonly ApiRoute[];
  /** The console's built files, served at /console/; absent: no console. */
  consoleDir?: string;
}

export interface Api {
  app: Koa;
  routes: readonly ApiRoute[];
  /** The app on an HTTP server, which also answers requests its parser refuses in the spec's error format. */
  listen(port: number, host?: string): Server;
  /** Stops what the routes run in the background (the analog index). */
  close(): Promise<void>;
}

/**
 * The Koa application: cross-cutting middleware first, then the routes. Order matters:
 * the caller is resolved before the rate limiter (which counts per key or IP and sets its
 * headers), and refused (401/402/403) only by each route's guard after it, so every
 * response carries the headers and an unknown path answers 404 with or without a key.
 */
export function createApi(deps: ApiDeps): Api {
  const now = deps.now ?? Date.now;
  const app = new Koa();
  const keys = deps.keys ?? new KeyService({ log: deps.log, codec: deps.codec, now });
  const tokens = new TokenDirectory({ store: deps.store, now });
  const { routes, close } = apiRoutes({ store: deps.store, log: deps.log, logger: deps.logger, now, startedAt: deps.startedAt, tokens, webhooks: deps.webhooks, streams: deps.streams, processing: deps.processing, codec: deps.codec });
  const all = [...routes, ...(deps.extraRoutes ?? [])];
  const router = mountRoutes(all);
  app.use(serverTiming());
  app.use(requestId());
  app.use(errorHandler(deps.logger));
  // The console's files need no caller and count against no limit: a page load is several
  // requests, and a monitor polling /v1/health from the same address must not lock it out.
  if (deps.consoleDir !== undefined) app.use(consoleFiles(deps.consoleDir));
  app.use(authenticate(keys, new Set(all.filter((route) => route.public).map((route) => route.path))));
  app.use(rateLimit({ now }));
  app.use(router.routes());
  app.use(router.allowedMethods());
  const listen = (port: number, host?: string) => {
    const server = host === undefined ? app.listen(port) : app.listen(port, host);
    answerMalformedRequests(server);
    return server;
  };
  return { app, routes: all, listen, close };
}
