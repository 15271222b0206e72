import { PROJECTIONS } from '../../projections/index.ts';
import { startLiveProjections } from '../../projections/runtime/runner.ts';
import type { Role } from './role.ts';

/** Every projection into the process's store, each in its `projection.<name>` group. */
export const projectionsRole: Role = {
  name: 'projections',
  async start({ config, logger, services, store, failed }) {
    const { log, codec } = services;
    const projections = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store: await store(), logger });
    let stopping = false;
    // A projection stopped for good leaves the store behind the log for as long as the service runs.
    projections.failed.catch((err: unknown) => {
      if (!stopping) failed?.(err);
    });
    return {
      stop: () => {
        stopping = true;
        return projections.stop();
      },
    };
  },
};
