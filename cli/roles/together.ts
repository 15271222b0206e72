import type { Role, RunningRole } from './role.ts';

/**
 * Roles that are started and stopped as one, in the order of ROLES: `parts` listed producer
 * first stop in that order and start in reverse.
 */
export function together(name: string, parts: Role[]): Role {
  return {
    name,
    async start(ctx) {
      const running: RunningRole[] = [];
      try {
        for (const part of [...parts].reverse()) running.unshift(await part.start({ ...ctx, logger: ctx.logger.child({ part: part.name }) }));
      } catch (err) {
        for (const started of running) await started.stop();
        throw err;
      }
      return {
        async stop() {
          for (const started of running) await started.stop();
        },
      };
    },
  };
}
