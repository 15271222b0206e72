import { setTimeout as delay } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { ApiError } from '../api/errors.ts';
import { validationError } from '../api/http/validate.ts';
import type { EventLog } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { DATASET } from '../presenters/resource.ts';
import type { Codec } from '../schemas/codec.ts';
import { reachesKey, type PublicEvent } from '../schemas/records.ts';
import type { Connection } from './connection.ts';
import { decodeCursor, encodeCursor, type StreamPosition } from './cursor.ts';
import { decodePublicEvent, PUBLIC_EVENTS_TOPIC, READ_BATCH, type PublicEventFeed } from './feed.ts';
import { eventFrame } from './protocol.ts';
import { subscriptionMatches, type Subscription } from './subscriptions.ts';

/** How far back a resume cursor may be: older ones are refused, the client resyncs over REST. */
export const RESUME_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface CatchUpOptions {
  log: EventLog;
  codec: Codec;
  logger: Logger;
  feed: PublicEventFeed;
  now: () => number;
  pollMs: number;
  /** Unsent bytes past which catching up waits for the client instead of reading on. */
  maxBufferedBytes: number;
  windowMs?: number;
}

/**
 * Resuming from a cursor. A connection with a subscription to bring up to date leaves the
 * live flow and reads public.events itself, partition by partition, from the lowest position
 * of its subscriptions to where the shared feed stands, then rejoins the live flow in the
 * synchronous step where its subscriptions all stand where the feed does: nothing is read
 * twice or skipped in between. An event goes out when a subscription that has not seen it
 * asks for it, unless another subscription of the connection asking for it already saw it.
 */
export class CatchUps {
  private readonly running = new Set<Promise<void>>();
  private stopped = false;

  constructor(private readonly options: CatchUpOptions) {}

  /** The position a `resume` cursor names, or the VALIDATION error its subscribe is answered with. */
  async check(cursor: string): Promise<StreamPosition | ApiError> {
    const { log, now, windowMs = RESUME_WINDOW_MS } = this.options;
    const refuse = (code: string, message: string) => validationError([{ path: 'body.resume', code, message: `${message}; resync over REST and subscribe without resume` }]);
    const position = decodeCursor(cursor);
    const partitions = this.options.feed.positions().length;
    if (position === null || position.positions.length !== partitions) return refuse('invalid_cursor', 'not a cursor of this stream');
    if (now() - position.issuedAt > windowMs) return refuse('cursor_expired', `the cursor is older than the resume window of ${windowMs / 3_600_000} h`);
    const [start, end] = await Promise.all([log.startOffsets(PUBLIC_EVENTS_TOPIC), log.endOffsets(PUBLIC_EVENTS_TOPIC)]);
    for (const offsets of [position.positions, ...position.lagging.values()]) {
      for (let p = 0; p < partitions; p++) {
        if (offsets[p] > (end[p]?.offset ?? 0)) return refuse('invalid_cursor', 'the cursor points past the end of the log');
        if (offsets[p] < (start[p]?.offset ?? 0)) return refuse('cursor_expired', 'the log no longer holds the events after the cursor');
      }
    }
    return position;
  }

  /**
   * Called in the synchronous step that added `sub` to the connection: `from` is where it
   * resumes, null for "from now". A live connection starts catching up when `from` is not where
   * the feed stands.
   */
  begin(conn: Connection, sub: Subscription<Connection>, from: number[] | null): void {
    const live = this.options.feed.positions();
    if (conn.catchingUp !== null) {
      conn.catchingUp.set(sub, from === null ? live : [...from]);
      return;
    }
    if (from === null || sameOffsets(from, live)) return;
    conn.catchingUp = new Map([...conn.subscriptions.values()].map((s) => [s, s === sub ? [...from] : [...live]]));
    const run = this.run(conn).finally(() => this.running.delete(run));
    this.running.add(run);
  }

  /** The cursor of a connection as it stands, for a `subscribed` answer. */
  cursorOf(conn: Connection): string {
    const now = this.options.now();
    return encodeCursor(conn.catchingUp === null ? { issuedAt: now, positions: this.options.feed.positions(), lagging: new Map() } : this.positionOf(conn.catchingUp));
  }

  /** Where the live flow stands: a subscription made now starts here. */
  livePositions(): number[] {
    return this.options.feed.positions();
  }

  /** Waits for every catch-up to end; they end once their socket closes. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.running);
  }

  private async run(conn: Connection): Promise<void> {
    const { feed, log, logger, pollMs } = this.options;
    const positions = conn.catchingUp!;
    const open = () => !this.stopped && conn.socket.readyState === WebSocket.OPEN;
    try {
      while (open()) {
        const target = feed.positions();
        for (let p = 0; p < target.length && open(); p++) {
          // The reader's place on p. A subscription added behind it meanwhile is read for on the next pass.
          let reader = Math.min(...[...positions.values()].map((at) => at[p]));
          while (reader < target[p] && open()) {
            const records = await log.read(PUBLIC_EVENTS_TOPIC, p, reader, Math.min(READ_BATCH, target[p] - reader));
            if (records.length === 0) break;
            for (const record of records) {
              if (record.offset >= target[p]) break;
              const event = await decodePublicEvent(record, this.options);
              await this.roomFor(conn);
              // From here to the send, synchronous: the subscriptions are the ones the decision saw.
              const due = event !== null && this.due(conn, positions, event, p, reader, record.offset);
              carry(positions, p, reader, record.offset + 1);
              reader = record.offset + 1;
              if (due) conn.sendEvent(eventFrame(event, encodeCursor(this.positionOf(positions))), event.eventId);
            }
          }
          if (reader < target[p]) carry(positions, p, reader, target[p]);
        }
        // Synchronous from the check to the switch: the feed hands out no event in between.
        const live = feed.positions();
        if ([...positions.values()].every((at) => sameOffsets(at, live))) {
          conn.catchingUp = null;
          return;
        }
        // Nothing more to read yet: a subscription stands ahead of this instance's feed (its cursor came from a faster one).
        if (sameOffsets(target, live)) await delay(pollMs);
      }
    } catch (err) {
      logger.error({ err, connectionId: conn.id }, 'catching up from a resume cursor failed');
      conn.sendError(new ApiError('INTERNAL', 'resuming failed; reconnect and resume again'));
      conn.socket.close(1011, 'resuming failed');
    }
  }

  /**
   * Whether the record at `offset` goes out: a subscription standing at the reader that asks
   * for it has not seen it, and no subscription past it that asked for it since it began has.
   */
  private due(conn: Connection, positions: Map<Subscription<Connection>, number[]>, e: PublicEvent, partition: number, reader: number, offset: number): boolean {
    if (e.dataset !== DATASET || !reachesKey(e, conn.key.id, conn.key.team?.id ?? null)) return false;
    let wanted = false;
    for (const [sub, at] of positions) {
      if (at[partition] < reader || !subscriptionMatches(sub, e)) continue;
      if (at[partition] <= offset) wanted = true;
      else if (sub.since === null || offset >= sub.since[partition]) return false;
    }
    return wanted;
  }

  /**
   * The cursor of a connection catching up: its lowest position, and every subscription filter
   * standing elsewhere. Subscriptions of one filter see the same events, so the furthest counts.
   */
  private positionOf(positions: Map<Subscription<Connection>, number[]>): StreamPosition {
    const byFilter = new Map<string, number[]>();
    for (const [sub, at] of positions) {
      const seen = byFilter.get(sub.filter);
      byFilter.set(sub.filter, seen ? seen.map((o, p) => Math.max(o, at[p])) : [...at]);
    }
    const all = [...byFilter.values()];
    const lowest = all[0].map((_, p) => Math.min(...all.map((at) => at[p])));
    const lagging = new Map([...byFilter].filter(([, at]) => !sameOffsets(at, lowest)));
    return { issuedAt: this.options.now(), positions: lowest, lagging };
  }

  /** Catching up reads no faster than the client takes frames: it waits rather than drops. */
  private async roomFor(conn: Connection): Promise<void> {
    while (conn.socket.bufferedAmount > this.options.maxBufferedBytes && conn.socket.readyState === WebSocket.OPEN) await delay(this.options.pollMs);
  }
}

/** Moves the subscriptions the reader carries (standing in [from, next)) to `next`; those behind or ahead stay. */
function carry(positions: Map<Subscription<Connection>, number[]>, partition: number, from: number, next: number): void {
  for (const at of positions.values()) if (at[partition] >= from && at[partition] < next) at[partition] = next;
}

export function sameOffsets(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((o, i) => o === b[i]);
}
