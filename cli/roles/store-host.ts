import type { Role } from './role.ts';

/**
 * The embedded store's own thread (onWorkerThread's `holdsStore`): the thread opens the store
 * and serves it before this starts, and closes it after this stops, so there is nothing else
 * to do. Not one of ROLES: it comes with the role that writes the store.
 */
export const storeHostRole: Role = {
  name: 'store',
  start: async () => ({ stop: async () => undefined }),
};
