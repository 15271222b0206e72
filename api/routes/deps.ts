import type { Logger } from '../../infra/logging.ts';
import type { EventLog } from '../../infra/log/port.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { TokenDirectory } from '../services/token-directory.ts';

/** What route groups read: the projections' store, the event log (health), a clock, token metadata. */
export interface RouteDeps {
  store: AnalyticalStore<ProjectionTables>;
  log: EventLog;
  logger: Logger;
  /** Epoch ms; injected by tests to move time. */
  now: () => number;
  startedAt: number;
  /** Token metadata for responses that embed the token object, shared by the route groups. */
  tokens: TokenDirectory;
}
