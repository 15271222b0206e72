import { announcePresence } from '../../api/stream-presence.ts';
import { startStreamServer, STREAM_PATH } from '../../stream/server.ts';
import type { Role } from './role.ts';

/**
 * The WebSocket stream (spec 6.5) on STREAM_PORT: public events from the log to subscribed
 * clients. Its heartbeats on the log tell the API, wherever it runs, that it is up and where.
 */
export const streamRole: Role = {
  name: 'stream',
  async start({ config, logger, services, store, keys }) {
    const { log, codec } = services;
    const server = await startStreamServer({ log, codec, store: await store(), logger, port: config.STREAM_PORT, keys: keys?.() });
    const base = (config.TQA_STREAM_PUBLIC_URL ?? `ws://localhost:${server.port}`).replace(/\/+$/, '');
    const presence = await announcePresence({ log, codec, logger, url: base + STREAM_PATH });
    logger.info({ port: server.port, url: base + STREAM_PATH }, 'WebSocket stream listening');
    return {
      stop: async () => {
        // Unannounced first, so the API stops sending clients here while the sockets close.
        await presence.stop();
        await server.stop();
      },
    };
  },
};
