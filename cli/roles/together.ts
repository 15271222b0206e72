import { warnWhileStopping, type Role, type RunningRole } from './role.ts';

/**
 * Roles that are started and stopped as one, in the order of ROLES: `parts` listed producer
 * first stop in that order and start in reverse. `stopAtOnce`: the parts are peers (one
 * stage's threads, members of one group) and stop at the same time: one by one, each leave
 * would re-balance the group and the next member's stop would wait for that join.
 */
export function together(name: string, parts: Role[], { stopAtOnce = false } = {}): Role {
  return {
    name,
    async start(ctx) {
      const running: RunningRole[] = [];
      try {
        for (const part of [...parts].reverse()) {
          const logger = ctx.logger.child({ part: part.name });
          running.unshift(warnWhileStopping(await part.start({ ...ctx, logger }), logger));
        }
      } catch (err) {
        for (const started of running) await started.stop();
        throw err;
      }
      return {
        async stop() {
          if (stopAtOnce) await Promise.all(running.map((started) => started.stop()));
          else for (const started of running) await started.stop();
        },
      };
    },
  };
}
