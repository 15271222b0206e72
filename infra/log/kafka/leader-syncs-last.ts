import { setTimeout as delay } from 'node:timers/promises';

const FOLLOWERS_SYNC_FIRST_MS = 500;

/**
 * Called by a group leader's assigner before it answers: the leader syncs last. librdkafka's
 * mock broker answers a follower's SyncGroup that arrives after the leader's with
 * INVALID_REQUEST, and the follower's rejoin starts another re-balance, round after round.
 * Kafka waits for the leader's either way.
 */
export async function letFollowersSyncFirst(memberCount: number): Promise<void> {
  if (memberCount > 1) await delay(FOLLOWERS_SYNC_FIRST_MS);
}
