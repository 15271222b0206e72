import { z } from 'zod';

/**
 * Heartbeats of running stream instances (topic ops.stream-presence, compacted by instance):
 * how the API, in another process or on another host, knows whether and where the stream
 * is up. A stopping instance writes a tombstone for its key.
 */
export const StreamPresenceSchema = z.strictObject({
  instanceId: z.string().regex(/^stream_[0-9a-f]+$/),
  url: z.string().regex(/^wss?:\/\//, 'must be a ws:// or wss:// URL'),
  ts: z.number().int(),
});
export type StreamPresence = z.infer<typeof StreamPresenceSchema>;
