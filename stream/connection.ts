import type { WebSocket } from 'ws';
import { ApiError } from '../api/errors.ts';
import type { ApiKey } from '../api/keys.ts';
import { STREAM_LIMITS } from '../api/schemas/meta.ts';
import type { Subscription } from './subscriptions.ts';
import { errorFrame } from './protocol.ts';

export interface ConnectionLimits {
  /** Bytes `ws` may hold unsent for this socket before its events are dropped. */
  maxBufferedBytes: number;
  now: () => number;
}

/**
 * One client socket. Events go through a bounded send buffer: `ws`'s own, capped by
 * `bufferedAmount`, so a slow reader costs at most that much memory and never holds up the
 * others (sends never wait). While the cap is exceeded its events are dropped; once it has
 * drained, one `warning` EVENTS_DROPPED says how many and since which event.
 */
export class Connection {
  readonly subscriptions = new Map<string, Subscription<Connection>>();
  /** Whether the client answered since the last ping round. */
  alive = true;
  /**
   * While the connection catches up from a resume cursor: where each subscription stands on
   * public.events. The live flow skips the connection meanwhile; null once it is live.
   */
  catchingUp: Map<Subscription<Connection>, number[]> | null = null;
  private readonly received: number[] = [];
  private dropped = 0;
  private droppedSince: string | null = null;

  constructor(
    readonly id: string,
    readonly socket: WebSocket,
    readonly key: ApiKey,
    readonly keyHash: string,
    private readonly limits: ConnectionLimits,
  ) {}

  /** Control frames (welcome, replies, errors, pings) are small and always sent. */
  send(frame: unknown): void {
    this.socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  sendError(err: ApiError, ref?: string): void {
    this.send(errorFrame(err, ref));
  }

  sendEvent(frame: string, eventId: string): void {
    if (this.socket.bufferedAmount > this.limits.maxBufferedBytes) {
      if (this.dropped === 0) this.droppedSince = eventId;
      this.dropped++;
      return;
    }
    if (this.dropped > 0) {
      this.send({
        type: 'warning',
        code: 'EVENTS_DROPPED',
        message: `${this.dropped} events were dropped because this client reads too slowly; resync over REST`,
        dropped: this.dropped,
        since_event_id: this.droppedSince,
      });
      this.dropped = 0;
      this.droppedSince = null;
    }
    this.socket.send(frame);
  }

  /** Counts a client message; false past STREAM_LIMITS.maxClientMessages in the sliding window. */
  admitMessage(): boolean {
    const now = this.limits.now();
    const windowStart = now - STREAM_LIMITS.clientMessageWindowSec * 1000;
    while (this.received.length > 0 && this.received[0] <= windowStart) this.received.shift();
    if (this.received.length >= STREAM_LIMITS.maxClientMessages) return false;
    this.received.push(now);
    return true;
  }
}
