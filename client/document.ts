import { createRequire } from 'node:module';
import { createLogger } from '../infra/logging.ts';
import type { EventLog } from '../infra/log/port.ts';
import type { Codec } from '../schemas/codec.ts';
import { openApiDocument } from '../api/openapi.ts';
import { apiRoutes } from '../api/routes/index.ts';
import type { RouteDeps } from '../api/routes/deps.ts';
import { TokenDirectory } from '../api/services/token-directory.ts';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/**
 * The document GET /openapi.json serves, built from the same routes without a running
 * service: building it reads no data, so the store and the log refuse any use.
 */
export async function servedDocument(): Promise<Record<string, unknown>> {
  const refuse = (): never => {
    throw new Error('building the OpenAPI document reads no data');
  };
  const store = { query: refuse } as unknown as RouteDeps['store'];
  const now = () => 0;
  const { routes, close } = apiRoutes({
    store,
    log: {} as EventLog,
    codec: {} as Codec,
    logger: createLogger('silent'),
    now,
    startedAt: 0,
    tokens: new TokenDirectory({ store, now }),
  });
  await close();
  return openApiDocument(routes, version) as Record<string, unknown>;
}
