import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probeProvider, type ProviderHealth } from '../api/services/provider-probe.ts';
import type { EventLog } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { sql } from '../infra/store/sql-literal.ts';
import type { CatchUpMonitor, CatchUpStatus } from './catch-up.ts';

export interface HealthPortDeps {
  port: number;
  roles: string[];
  log: EventLog;
  /** The store this process's roles need (its opening: the probe waits for it), undefined if none. */
  store(): Promise<AnalyticalStore> | undefined;
  catchUp: CatchUpMonitor;
  logger: Logger;
}

export interface HealthReport {
  status: 'ok' | 'down';
  roles: string[];
  providers: ProviderHealth[];
  processing: Pick<CatchUpStatus, 'caughtUp' | 'lagRecords' | 'timeLeftSeconds' | 'mostBehind'> | null;
}

/**
 * `GET /healthz` for an orchestrator's probe, on every `tqa start` process with
 * TQA_HEALTH_PORT set, including roles that serve no HTTP of their own (processors,
 * projections, feeds, webhooks, research): 200 while the event log (and the store, where this
 * process's roles need one) answers, 503 naming the provider that does not. Internal: not part of
 * the public API, no key.
 */
export async function startHealthPort(deps: HealthPortDeps): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/healthz') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not found: GET /healthz only' }));
      return;
    }
    healthReport(deps).then(
      (report) => res.writeHead(report.status === 'ok' ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(report)),
      (err: unknown) => {
        deps.logger.error({ err }, 'health report failed');
        res.writeHead(500).end();
      },
    );
  });
  server.listen(deps.port);
  await once(server, 'listening'); // rejects on the server's 'error' (the port is taken)
  deps.logger.info({ port: (server.address() as AddressInfo).port }, 'health port listening');
  return server;
}

async function healthReport({ roles, log, store, catchUp, logger }: HealthPortDeps): Promise<HealthReport> {
  const opening = store();
  const probes: Promise<{ health: ProviderHealth }>[] = [probeProvider('event_log', () => log.listTopics(), logger)];
  // Opening is part of the probe: a store that cannot be opened, or not in time, is down.
  if (opening) probes.push(probeProvider('analytical_store', async () => (await opening).query(sql`SELECT 1 AS one`), logger));
  const providers = (await Promise.all(probes)).map((p) => p.health);
  const lag = catchUp.current();
  return {
    status: providers.every((p) => p.status === 'ok') ? 'ok' : 'down',
    roles,
    providers,
    processing: lag === null ? null : { caughtUp: lag.caughtUp, lagRecords: lag.lagRecords, timeLeftSeconds: lag.timeLeftSeconds, mostBehind: lag.mostBehind },
  };
}
