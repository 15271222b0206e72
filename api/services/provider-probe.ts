import { performance } from 'node:perf_hooks';
import type { Logger } from '../../infra/logging.ts';
import { StoreError } from '../../infra/store/errors.ts';
import { PROBE_TIMEOUT_MS, type Health } from '../schemas/meta.ts';

export type ProviderHealth = Health['providers'][number];

/**
 * Runs a provider's probe; a failure or a probe slower than PROBE_TIMEOUT_MS marks it down.
 * Shared by GET /v1/health and the health port of the roles without an HTTP server.
 */
export async function probeProvider<T>(name: ProviderHealth['name'], run: () => Promise<T>, logger: Logger): Promise<{ health: ProviderHealth; value: T | null }> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProbeTimeout()), PROBE_TIMEOUT_MS);
  });
  const latencyMs = () => Math.round((performance.now() - started) * 100) / 100;
  try {
    const value = await Promise.race([run(), timeout]);
    return { health: { name, status: 'ok', latencyMs: latencyMs(), error: null }, value };
  } catch (err) {
    logger.warn({ err, provider: name }, 'health probe failed');
    return { health: { name, status: 'down', latencyMs: latencyMs(), error: errorCode(err) }, value: null };
  } finally {
    clearTimeout(timer);
  }
}

class ProbeTimeout extends Error {
  readonly code = 'TIMEOUT';
  constructor() {
    super(`no answer within ${PROBE_TIMEOUT_MS} ms`);
  }
}

/** The failure as a code: the message can name hosts and paths, so it goes to the log only (the endpoint is public). */
function errorCode(err: unknown): string {
  if (err instanceof StoreError || err instanceof ProbeTimeout) return err.code;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.name : 'UNKNOWN';
}
