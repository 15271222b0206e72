import { ApiError } from '../api/errors.ts';
import { validationError } from '../api/http/validate.ts';
import { STREAM_LIMITS } from '../api/schemas/meta.ts';
import type { Logger } from '../infra/logging.ts';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { resolveTokenRef } from '../projections/read-models/token-ref.ts';
import type { ProjectionTables } from '../projections/tables.ts';
import type { CatchUps } from './catch-up.ts';
import type { Connection } from './connection.ts';
import { filterKey } from './cursor.ts';
import { newId, parseClientFrame, type ClientFrame } from './protocol.ts';
import type { SubscriptionIndex } from './subscriptions.ts';

export interface SessionDeps {
  index: SubscriptionIndex<Connection>;
  store: AnalyticalStore<ProjectionTables>;
  logger: Logger;
  catchUps: CatchUps;
}

/** Answers one client frame: rate limit, validation, then subscribe / unsubscribe / ping. */
export async function handleFrame(conn: Connection, text: string, deps: SessionDeps): Promise<void> {
  conn.alive = true;
  if (!conn.admitMessage()) {
    conn.sendError(
      new ApiError('RATE_LIMITED', `more than ${STREAM_LIMITS.maxClientMessages} messages in ${STREAM_LIMITS.clientMessageWindowSec} s; this one was ignored`),
    );
    return;
  }
  const frame = parseClientFrame(text);
  if (frame instanceof ApiError) return conn.sendError(frame);
  try {
    switch (frame.type) {
      case 'ping':
        return conn.send({ type: 'pong', ts: new Date().toISOString() });
      case 'unsubscribe': {
        const sub = conn.subscriptions.get(frame.subscription_id);
        if (!sub) return conn.sendError(new ApiError('NOT_FOUND', `no subscription ${frame.subscription_id} on this connection`));
        conn.subscriptions.delete(sub.id);
        conn.catchingUp?.delete(sub);
        deps.index.remove(sub);
        return conn.send({ type: 'unsubscribed', subscription_id: sub.id });
      }
      case 'subscribe':
        return await subscribe(conn, frame, deps);
    }
  } catch (err) {
    deps.logger.error({ err, connectionId: conn.id }, 'stream frame failed');
    conn.sendError(new ApiError('INTERNAL', 'unexpected error; retry'));
  }
}

async function subscribe(conn: Connection, frame: Extract<ClientFrame, { type: 'subscribe' }>, deps: SessionDeps): Promise<void> {
  const full = () => conn.subscriptions.size >= STREAM_LIMITS.maxSubscriptions;
  const tooMany = () =>
    validationError([{ path: 'body', code: 'too_many_subscriptions', message: `at most ${STREAM_LIMITS.maxSubscriptions} subscriptions per connection`, maximum: STREAM_LIMITS.maxSubscriptions }]);
  if (full()) return conn.sendError(tooMany(), frame.id);
  const resumed = frame.resume === undefined ? null : await deps.catchUps.check(frame.resume);
  if (resumed instanceof ApiError) return conn.sendError(resumed, frame.id);
  const resolved = await Promise.all(frame.tokens.map((ref) => resolveTokenRef(deps.store, ref)));
  const unknown = frame.tokens.flatMap((ref, i) => (resolved[i] === null ? [{ path: `body.tokens[${i}]`, code: 'unknown_token', message: `no token ${ref}` }] : []));
  if (unknown.length > 0) return conn.sendError(validationError(unknown), frame.id);
  // Checked again: another subscribe may have been accepted while the tokens resolved.
  if (full()) return conn.sendError(tooMany(), frame.id);
  const tokens = [...new Map(resolved.map((row) => [row!.token_id, { token_id: row!.token_id, symbol: row!.symbol }])).values()];
  const events = [...new Set(frame.events)];
  const tokenIds = tokens.map((t) => t.token_id);
  const filter = filterKey(events, tokenIds);
  const from = resumed === null ? null : (resumed.lagging.get(filter) ?? resumed.positions);
  const sub = { id: newId('sub'), connection: conn, events, tokenIds, filter, since: from === null ? deps.catchUps.livePositions() : null };
  // One synchronous step from here to the answer: the subscription joins the live flow or its catch-up at a known position.
  conn.subscriptions.set(sub.id, sub);
  deps.index.add(sub);
  deps.catchUps.begin(conn, sub, from);
  // `cursor` (beyond the spec): a client that has received no event yet can resume from here.
  conn.send({ type: 'subscribed', ref: frame.id, subscription_id: sub.id, events: sub.events, tokens, cursor: deps.catchUps.cursorOf(conn) });
}
