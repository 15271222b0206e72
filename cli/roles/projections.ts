import { PROJECTIONS } from '../../projections/index.ts';
import { startLiveProjections } from '../../projections/runtime/runner.ts';
import type { Role } from './role.ts';

/** Every projection into the process's store, each in its `projection.<name>` group. */
export const projectionsRole: Role = {
  name: 'projections',
  async start({ config, logger, services, store }) {
    const { log, codec } = services;
    const projections = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store: await store(), logger });
    return { stop: () => projections.stop() };
  },
};
