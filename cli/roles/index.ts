import { PROCESSORS } from '../../processors/index.ts';
import { apiRole } from './api.ts';
import { processorOnThreads } from './processor-threads.ts';
import type { Role } from './role.ts';
import { streamRole } from './stream.ts';
import { together } from './together.ts';
import { webhooksRole } from './webhooks.ts';
import { onWorkerThread } from './worker-thread.ts';

/**
 * Every role, in the order they stop: the inputs first (the feed, the processors, then the
 * API's requests), so each later role drains what an earlier one produced last; they start
 * in reverse, so the consumers are up before the producers, and the API, which needs only
 * the store, answers before the processors' threads have loaded their code (seconds). The
 * feeds (a first start's seeding), the processors (a catch-up), the research runs and the
 * projections run on worker threads of their own, so their CPU work never holds the API's
 * event loop when they run in one process; the projections' thread holds an embedded store
 * and answers the other roles' reads of it (the research thread's on a connection of its
 * own). Each processor has threads of its own: the public events, derived from
 * the engine's outputs, are worked out on another core while the engine goes on, and a
 * processor with a task per partition (the outcomes stage) spreads its partitions over
 * several. The processors start at once: each reads the log from its own group's commits,
 * so none waits for another to be up. They stop at once too: each saves what it handled and
 * needs nothing of the others to do so, and one whose stop the broker holds up (a member
 * kafkajs cannot get out of its group) holds up none of the others.
 */
export const ROLES: readonly Role[] = [
  onWorkerThread('feeds', new URL('./feeds.ts', import.meta.url), 'feedsRole', { background: true }),
  together(
    'processors',
    PROCESSORS.map((p) => processorOnThreads(p)),
    { startAtOnce: true, stopAtOnce: true },
  ),
  apiRole,
  streamRole,
  onWorkerThread('research', new URL('./research.ts', import.meta.url), 'researchRole', { readsStore: true, background: true }),
  webhooksRole,
  onWorkerThread('projections', new URL('./projections.ts', import.meta.url), 'projectionsRole', { holdsStore: true }),
];

export const ROLE_NAMES = ROLES.map((r) => r.name);
