import { Dispatcher } from '../../webhooks/delivery/dispatcher.ts';
import { loadSecretBox } from '../../webhooks/secret-box.ts';
import type { Role } from './role.ts';

/** Webhook deliveries: signs and POSTs public events to registered endpoints, with retries. */
export const webhooksRole: Role = {
  name: 'webhooks',
  async start({ config, logger, services }) {
    const dispatcher = new Dispatcher({
      log: services.log,
      codec: services.codec,
      logger,
      secrets: await loadSecretBox(config),
      policy: { allowPrivate: config.TQA_WEBHOOKS_ALLOW_PRIVATE },
    });
    await dispatcher.start();
    logger.info('webhook deliveries running');
    return { stop: () => dispatcher.stop() };
  },
};
