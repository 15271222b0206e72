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
