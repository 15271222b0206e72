import { PROJECTIONS } from '../../projections/index.ts';
import { startLiveProjections } from '../../projections/runtime/runner.ts';
import { failureReporter, type Role } from './role.ts';

/** Every projection into the process's store, each in its `projection.<name>` group. */
export const projectionsRole: Role = {
  name: 'projections',
  async start({ config, logger, services, store, failed }) {
    const { log, codec } = services;
    const projections = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store: await store(), logger });
    // A projection stopped for good leaves the store behind the log for as long as the service runs.
    const failure = failureReporter(failed);
    projections.failed.catch(failure.report);
    return {
      stop: () => {
        failure.stopping();
        return projections.stop();
      },
    };
  },
};
