import type { MessagePort } from 'node:worker_threads';
import type { KeyService } from '../../api/keys.ts';
import type { Config } from '../../infra/config.ts';
import type { LogServices } from '../../infra/bootstrap.ts';
import type { Logger } from '../../infra/logging.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { CatchUpMonitor } from '../catch-up.ts';

/** What every role gets from `tqa start`: one config, one log connection, one store per process. */
export interface RoleContext {
  config: Config;
  /** The role's own child logger (`role: <name>`). */
  logger: Logger;
  services: LogServices;
  /** The process's store, opened on first use (embedded DuckDB allows one instance per file). */
  store(): Promise<AnalyticalStore<ProjectionTables>>;
  /**
   * Makes `store` the process's store for the roles started after this one (a thread holds
   * it); `connect`, when given, opens another connection to that thread's store, for a role
   * on a thread of its own to read it directly rather than through this thread.
   */
  shareStore?(store: AnalyticalStore<ProjectionTables>, connect?: () => MessagePort): void;
  /** A new connection to the store a thread of this process holds (see shareStore); absent when none does. */
  storeConnection?(): MessagePort | undefined;
  /** The process's API keys, read from the log, made on first use: one for the API and the stream of a process. */
  keys?(): KeyService;
  stdout: NodeJS.WritableStream;
  /** The process's measurement of how far every stage is behind the log (absent on a worker thread). */
  catchUp?: CatchUpMonitor;
  /**
   * Told when a started role fails by itself (its thread's uncaught exception, a processor or
   * projection that stopped for good): `tqa start` then stops every role as on a signal and
   * exits with 1. Without it a thread's failure exits the process with 1 at once, and a role
   * on the caller's thread only logs its own.
   */
  failed?(err: unknown): void;
}

/**
 * For a role whose work can stop for good while the service runs on (a consumer's run that
 * rejects): report() tells `failed` of it, unless stopping() came first, as a role's stop calls it.
 */
export function failureReporter(failed: RoleContext['failed']): { report(err: unknown): void; stopping(): void } {
  let stopping = false;
  return {
    report: (err) => {
      if (!stopping) failed?.(err);
    },
    stopping: () => {
      stopping = true;
    },
  };
}

/** A started role; stop() finishes what it has in hand and releases what it holds. */
export interface RunningRole {
  stop(): Promise<void>;
}

/** One role of the service, started alone or with others by `tqa start --roles …`. */
export interface Role {
  name: string;
  start(ctx: RoleContext): Promise<RunningRole>;
}

const STILL_STOPPING_EVERY_MS = 30_000;

/** The role with a stop that logs a warning every 30 s until it is done: a stop that hangs names itself. */
export function warnWhileStopping(running: RunningRole, logger: Logger): RunningRole {
  return {
    async stop() {
      const since = Date.now();
      const warning = setInterval(() => logger.warn({ stoppingForMs: Date.now() - since }, 'still stopping'), STILL_STOPPING_EVERY_MS).unref();
      try {
        await running.stop();
      } finally {
        clearInterval(warning);
      }
    },
  };
}
