import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../api/errors.ts';
import { issuesOf, validationError } from '../api/http/validate.ts';
import { STREAM_EVENTS, STREAM_LIMITS } from '../api/schemas/meta.ts';
import type { PublicEvent, PublicEventType } from '../schemas/records.ts';

/** The frames of spec 6.5: what a client may send, and the server's frames as wire JSON. */

export type StreamEvent = (typeof STREAM_EVENTS)[number];

/** The stream names `token.score.updated` `score.updated` (spec 6.5); the other names are shared. */
export const STREAM_EVENT_OF: Record<PublicEventType, StreamEvent> = {
  'signal.created': 'signal.created',
  'signal.ended': 'signal.ended',
  'token.score.updated': 'score.updated',
  'cohort.convergence': 'cohort.convergence',
  'narrative.shift': 'narrative.shift',
};

/** Spec 6.5 accepts `$SYMBOL` and `tk_<id>` in `tokens`. */
const StreamTokenRef = z.string().regex(/^(\$[A-Za-z0-9]{1,20}|tk_[A-Za-z0-9]+)$/, 'must be $SYMBOL or tk_<id>');

export const ClientFrameSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('subscribe'),
    id: z.string().min(1).max(100),
    events: z.array(z.enum(STREAM_EVENTS)).min(1).max(STREAM_EVENTS.length),
    tokens: z.array(StreamTokenRef).max(STREAM_LIMITS.maxTokensPerSubscription).default([]),
    /** The `cursor` of the last event frame received: the subscription starts after it (README, "Resuming"). */
    resume: z.string().min(1).max(4096).optional(),
  }),
  z.strictObject({ type: z.literal('unsubscribe'), subscription_id: z.string().min(1) }),
  z.strictObject({ type: z.literal('ping') }),
]);
export type ClientFrame = z.infer<typeof ClientFrameSchema>;

/** The frame, or the VALIDATION error (with details.issues) its error frame carries. */
export function parseClientFrame(text: string): ClientFrame | ApiError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return validationError([{ path: 'body', code: 'invalid_json', message: 'the frame is not JSON' }]);
  }
  const parsed = ClientFrameSchema.safeParse(json);
  return parsed.success ? parsed.data : validationError(issuesOf('body', parsed.error));
}

export const newId = (prefix: 'conn' | 'sub') => `${prefix}_${randomBytes(12).toString('hex')}`;

export function errorFrame(err: ApiError, ref?: string): string {
  return JSON.stringify({ type: 'error', code: err.code, message: err.message, ...(ref === undefined ? {} : { ref }), ...(err.details ? { details: err.details } : {}) });
}

/**
 * An event frame, built once per event for every live recipient: `data` is already wire JSON
 * (rendered by the presenters), so it is spliced in rather than parsed and serialised again.
 * `cursor` (beyond the spec) is where a reconnecting client resumes after this event.
 */
export function eventFrame(e: PublicEvent, cursor: string): string {
  const head = JSON.stringify({ type: 'event', id: e.eventId, event: STREAM_EVENT_OF[e.type], created_at: new Date(e.ts).toISOString(), dataset: e.dataset, cursor });
  return `${head.slice(0, -1)},"data":${e.data}}`;
}
