import { LatestAuthorMetrics } from '../../api/services/latest-author-metrics.ts';
import { MIRROR_REFRESH_MS } from '../../api/services/hourly-mirror.ts';
import { SignalFeed } from '../../api/services/signal-feed.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { authorMetrics } from '../../projections/read-models/authors.ts';
import type { Page } from '../../projections/read-models/cursor.ts';
import { signalFeed, type SignalFeedQuery } from '../../projections/read-models/signals.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { Signal } from '../../schemas/records/quant-signals.ts';
import type { AuthorMetrics } from '../../schemas/records/quant-social.ts';

/**
 * The read models the API serves other than straight from the store. The read-model
 * contracts call them through this, so a runner can hold each way of serving them to the
 * same cases.
 */
export interface ServedReads {
  signalFeed(query: SignalFeedQuery): Promise<Page<Signal>>;
  authorMetrics(handleOrId: string, asOf?: number): Promise<AuthorMetrics | null>;
}

/** The reads straight from the store. */
export function storeReads(store: AnalyticalStore<ProjectionTables>): ServedReads {
  return {
    signalFeed: (query) => signalFeed(store, query),
    authorMetrics: (handleOrId, asOf) => authorMetrics(store, handleOrId, asOf),
  };
}

/**
 * The reads from the API's memory (api/services), on a clock that moves a refresh interval
 * at each look: every read first takes in what was written since the one before, so each
 * answer must be the store's.
 */
export function memoryReads(store: AnalyticalStore<ProjectionTables>): ServedReads {
  let clock = 0;
  const now = () => (clock += MIRROR_REFRESH_MS);
  const feed = new SignalFeed({ store, now });
  const authors = new LatestAuthorMetrics({ store, now });
  return {
    signalFeed: (query) => feed.page(query),
    authorMetrics: (handleOrId, asOf) => authors.find(handleOrId, asOf),
  };
}
