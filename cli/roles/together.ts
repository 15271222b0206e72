import { warnWhileStopping, type Role, type RunningRole } from './role.ts';

interface TogetherOptions {
  /**
   * The parts need nothing of one another to start (the processors: each its own consumer
   * group, reading the log from its own commits): they start at the same time. One by one,
   * on Kafka each would wait for its group's join (the broker holds a new group's first join
   * for a few seconds) before the next began, and the upstream stages, started last, began
   * their work last.
   */
  startAtOnce?: boolean;
  /**
   * The parts stop at the same time: peers (one stage's threads, members of one group), which
   * one by one would each re-balance the group with its leave and make the next member's stop
   * wait for that join; or parts that need nothing of one another to stop (the processors).
   */
  stopAtOnce?: boolean;
}

/**
 * Roles that are started and stopped as one, in the order of ROLES: `parts` listed producer
 * first stop in that order and start in reverse (or all at once, `startAtOnce`).
 */
export function together(name: string, parts: Role[], { startAtOnce = false, stopAtOnce = false }: TogetherOptions = {}): Role {
  return {
    name,
    async start(ctx) {
      const startPart = async (part: Role) => {
        const logger = ctx.logger.child({ part: part.name });
        return warnWhileStopping(await part.start({ ...ctx, logger }), logger);
      };
      const running: RunningRole[] = [];
      try {
        if (startAtOnce) {
          const started = await Promise.allSettled(parts.map(startPart));
          for (const result of started) if (result.status === 'fulfilled') running.push(result.value);
          const failed = started.find((result) => result.status === 'rejected');
          if (failed) throw failed.reason;
        } else {
          for (const part of [...parts].reverse()) running.unshift(await startPart(part));
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
