import { startStreamServer } from '../../stream/server.ts';
import type { Role } from './role.ts';

/** The WebSocket stream (spec 6.5) on STREAM_PORT: public events from the log to subscribed clients. */
export const streamRole: Role = {
  name: 'stream',
  async start({ config, logger, services, store }) {
    const server = await startStreamServer({ log: services.log, codec: services.codec, store: await store(), logger, port: config.STREAM_PORT });
    logger.info({ port: server.port }, 'WebSocket stream listening');
    return { stop: () => server.stop() };
  },
};
