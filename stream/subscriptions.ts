import type { PublicEvent } from '../schemas/records.ts';
import { STREAM_EVENT_OF, type StreamEvent } from './protocol.ts';

/** What a subscription asks for; `tokenIds` empty means every token. */
export interface Subscription<C> {
  id: string;
  connection: C;
  events: readonly StreamEvent[];
  tokenIds: readonly string[];
  /** filterKey of events and tokens: how a resume cursor names it. */
  filter: string;
  /**
   * Where on public.events it began without having seen what came before: the feed's
   * positions when subscribed; null when it resumed from a cursor (the client has seen
   * what it asked for before its position).
   */
  since: readonly number[] | null;
}

/** Whether the subscription asks for the event: the test `SubscriptionIndex` answers for many at once. */
export function subscriptionMatches(sub: Subscription<unknown>, e: PublicEvent): boolean {
  if (!sub.events.includes(STREAM_EVENT_OF[e.type])) return false;
  return sub.tokenIds.length === 0 || e.tokenId === null || sub.tokenIds.includes(e.tokenId);
}

interface Bucket<C> {
  anyToken: Set<Subscription<C>>;
  byToken: Map<string, Set<Subscription<C>>>;
}

/**
 * Subscriptions indexed by event and token, so routing an event costs the subscriptions it
 * matches, not every connection. An event without a token (narrative.shift, a convergence
 * without one) reaches every subscription of its type.
 */
export class SubscriptionIndex<C> {
  private readonly buckets = new Map<StreamEvent, Bucket<C>>();

  add(sub: Subscription<C>): void {
    for (const event of sub.events) {
      let bucket = this.buckets.get(event);
      if (!bucket) this.buckets.set(event, (bucket = { anyToken: new Set(), byToken: new Map() }));
      if (sub.tokenIds.length === 0) bucket.anyToken.add(sub);
      for (const token of sub.tokenIds) {
        let set = bucket.byToken.get(token);
        if (!set) bucket.byToken.set(token, (set = new Set()));
        set.add(sub);
      }
    }
  }

  remove(sub: Subscription<C>): void {
    for (const event of sub.events) {
      const bucket = this.buckets.get(event);
      if (!bucket) continue;
      bucket.anyToken.delete(sub);
      for (const token of sub.tokenIds) {
        const set = bucket.byToken.get(token);
        set?.delete(sub);
        if (set?.size === 0) bucket.byToken.delete(token);
      }
    }
  }

  /** The connections the event goes to, each once however many of its subscriptions match. */
  recipients(e: PublicEvent): Set<C> {
    const out = new Set<C>();
    const bucket = this.buckets.get(STREAM_EVENT_OF[e.type]);
    if (!bucket) return out;
    const take = (subs: Iterable<Subscription<C>> | undefined) => {
      for (const sub of subs ?? []) out.add(sub.connection);
    };
    take(bucket.anyToken);
    if (e.tokenId === null) for (const subs of bucket.byToken.values()) take(subs);
    else take(bucket.byToken.get(e.tokenId));
    return out;
  }
}
