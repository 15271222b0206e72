import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createApi } from '../../api/app.ts';
import { ensureDemoKey } from '../../api/demo-key.ts';
import { StreamDirectory } from '../../api/stream-presence.ts';
import { loadSecretBox } from '../../webhooks/secret-box.ts';
import { CAUGHT_UP_LAG } from '../catch-up.ts';
import type { Role } from './role.ts';

/** The HTTP API on PORT; on a data dir without one, also the demo key. */
export const apiRole: Role = {
  name: 'api',
  async start({ config, logger, services, store, stdout, catchUp, keys }) {
    const webhooks = { codec: services.codec, secrets: await loadSecretBox(config), policy: { allowPrivate: config.TQA_WEBHOOKS_ALLOW_PRIVATE } };
    const streams = new StreamDirectory({ log: services.log, codec: services.codec });
    const processing = () => {
      const status = catchUp?.current();
      if (!status) return null;
      const { caughtUp, lagRecords, timeLeftSeconds, mostBehind, stages, measuredAt } = status;
      return { caughtUp, caughtUpLagRecords: CAUGHT_UP_LAG, lagRecords, timeLeftSeconds, mostBehind, stages, measuredAt: new Date(measuredAt).toISOString() };
    };
    const consoleDir = fileURLToPath(new URL('../../dist/console', import.meta.url));
    const api = createApi({ log: services.log, store: await store(), startedAt: Date.now(), logger, webhooks, streams, processing, codec: services.codec, consoleDir, keys: keys?.() });
    const server = api.listen(config.PORT);
    try {
      await once(server, 'listening'); // rejects on the server's 'error'
    } catch (err) {
      // Not listening (the port is taken): the start fails and stops the roles started so far;
      // an unhandled 'error' would end the process with the store's thread still open.
      await api.close();
      throw err;
    }
    logger.info({ port: config.PORT }, 'API listening');
    // A convenience for a first look at the API: the service runs on without it.
    await ensureDemoKey({ log: services.log, codec: services.codec, dataDir: config.TQA_DATA_DIR, stdout, logger }).catch(
      (err: unknown) => logger.error({ err }, 'demo API key not created'),
    );
    return {
      stop: async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await api.close();
      },
    };
  },
};
