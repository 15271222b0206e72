/** `token-quant-analytics/stream`: the WebSocket stream client that resumes (docs/push.md). */
export * from '../stream/client/stream-client.ts';
