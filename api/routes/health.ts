import Router from '@koa/router';
import type { EventLog } from '../../infra/log/port.ts';

export interface HealthDeps {
  log: EventLog;
  startedAt: number;
}

/** GET /v1/health: public; whether the service and its providers answer. */
export function healthRoutes({ log, startedAt }: HealthDeps): Router {
  const router = new Router();
  router.get('/v1/health', async (ctx) => {
    const began = Date.now();
    let logStatus: { status: 'ok' | 'down'; latency_ms: number; error?: string };
    try {
      await log.listTopics();
      logStatus = { status: 'ok', latency_ms: Date.now() - began };
    } catch (err) {
      logStatus = { status: 'down', latency_ms: Date.now() - began, error: (err as Error).message };
    }
    const ok = logStatus.status === 'ok';
    ctx.status = ok ? 200 : 503;
    ctx.body = {
      object: 'health',
      dataset: 'live',
      livemode: true,
      status: ok ? 'ok' : 'degraded',
      started_at: new Date(startedAt).toISOString(),
      providers: { event_log: { mode: log.kind, ...logStatus } },
    };
  });
  return router;
}
