/**
 * Events of the WebSocket stream in the browser: where to connect comes from
 * GET /v1/stream/info, the key goes in `?key=` (browsers cannot set headers on a WebSocket).
 * Returns a function that closes it; `onState` says whether live updates flow.
 */

export interface StreamFrame {
  type: string;
  event?: string;
  data?: any;
}

export function openStream(key: string, events: string[], onEvent: (frame: StreamFrame) => void, onState: (state: string) => void): () => void {
  let socket: WebSocket | null = null;
  let closed = false;
  void (async () => {
    const info = (await (await fetch('/v1/stream/info')).json()) as { available: boolean; url: string | null; message: string | null };
    if (closed) return;
    if (!info.available || info.url === null) return onState(info.message ?? 'live updates unavailable');
    socket = new WebSocket(`${info.url}?key=${encodeURIComponent(key)}`);
    socket.onopen = () => socket!.send(JSON.stringify({ type: 'subscribe', id: 'console', events }));
    socket.onmessage = (message) => {
      const frame = JSON.parse(String(message.data)) as StreamFrame;
      if (frame.type === 'subscribed') onState('live');
      if (frame.type === 'event') onEvent(frame);
    };
    socket.onclose = () => {
      if (!closed) onState('live updates stopped');
    };
  })().catch((err: unknown) => onState(`live updates unavailable: ${String(err)}`));
  return () => {
    closed = true;
    socket?.close();
  };
}

/**
 * Items to apply once an animation frame, the latest per key, at most `limit` a frame: a
 * burst of events costs a render a frame, not one each, and a big burst is spread over the
 * frames that follow instead of holding up one.
 */
export function perFrame<T>(keyOf: (item: T) => string, limit: number, apply: (batch: T[]) => void): { push(item: T): void; stop(): void } {
  // A key keeps its place while it waits: a token updated again is not put back in the queue.
  const pending = new Map<string, T>();
  let frame = 0;
  const flush = () => {
    const batch: T[] = [];
    for (const [key, item] of pending) {
      if (batch.length === limit) break;
      batch.push(item);
      pending.delete(key);
    }
    frame = pending.size > 0 ? requestAnimationFrame(flush) : 0;
    apply(batch);
  };
  return {
    push(item) {
      pending.set(keyOf(item), item);
      frame ||= requestAnimationFrame(flush);
    },
    stop() {
      cancelAnimationFrame(frame);
      pending.clear();
    },
  };
}
