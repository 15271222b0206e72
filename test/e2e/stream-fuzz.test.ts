import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, type ErrorCode } from '../../api/errors.ts';
import { STREAM_EVENTS } from '../../api/schemas/meta.ts';
import { waitFor } from '../../infra/wait.ts';
import { encodeCursor } from '../../stream/cursor.ts';
import { startStreamServer, type StreamServer } from '../../stream/server.ts';
import { fuzzRuns, hostileJson, hostileText } from '../helpers/fuzz.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { Client, openStreamWorld, publicEvent, type StreamWorld } from './stream-world.ts';

/**
 * Fuzzed client messages on the real WebSocket stream: text that is not JSON, JSON of any
 * shape, frames near the protocol's (subscribe, unsubscribe, ping) with hostile fields and
 * resume cursors, binary frames. Each message gets exactly one answer, an error frame in the
 * spec's form (a REST code other than INTERNAL, a message) unless it was valid, the
 * connection keeps answering, and a well-formed client still gets its events afterwards.
 */

let world: StreamWorld;
let server: StreamServer;
let url: string;
let key: string;

beforeAll(async () => {
  world = await openStreamWorld();
  server = await startStreamServer({ log: world.log, codec: world.codec, store: world.store, logger: silentLogger, port: 0, host: '127.0.0.1', pollMs: 10 });
  url = `ws://127.0.0.1:${server.port}/v1/stream`;
  key = (await world.createKey(['stream:read'])).key;
});

afterAll(async () => {
  await server?.stop();
  await world?.close();
});

/** A resume cursor of the stream's own format with any numbers in it, or base64url of any JSON. */
const cursorLike: fc.Arbitrary<string> = fc.oneof(
  fc
    .record({ issuedAt: fc.oneof(fc.integer({ min: 0 }), fc.constant(Date.now())), positions: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }) })
    .map(({ issuedAt, positions }) => encodeCursor({ issuedAt, positions, lagging: new Map() })),
  hostileJson.map((json) => Buffer.from(JSON.stringify(json) ?? '').toString('base64url')),
  hostileText,
);

const field = <T>(valid: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: hostileJson });

/** A subscribe, unsubscribe or ping with fields fitting or hostile, sometimes an unknown field. */
const protocolFrame = fc.record(
  {
    type: field(fc.constantFrom('subscribe', 'unsubscribe', 'ping')),
    id: field(fc.string({ minLength: 1, maxLength: 12 })),
    events: field(fc.array(fc.constantFrom(...STREAM_EVENTS), { minLength: 1, maxLength: 3 })),
    tokens: field(fc.array(fc.oneof(fc.constantFrom('$ALPHA', 'tk_beta', '$NOPE', 'tk_missing'), hostileText), { maxLength: 3 })),
    resume: field(cursorLike),
    subscription_id: field(fc.constantFrom('sub_0123456789abcdef01234567', '')),
    colour: hostileJson,
  },
  { requiredKeys: ['type'] },
);

/** One client message: its data, and whether it is sent as a binary frame. */
const message: fc.Arbitrary<{ data: string; binary: boolean }> = fc.oneof(
  { weight: 4, arbitrary: protocolFrame.map((f) => ({ data: JSON.stringify(f), binary: false })) },
  { weight: 2, arbitrary: hostileJson.map((j) => ({ data: JSON.stringify(j) ?? 'undefined', binary: false })) },
  { weight: 1, arbitrary: hostileText.map((data) => ({ data, binary: false })) },
  { weight: 1, arbitrary: protocolFrame.map((f) => ({ data: JSON.stringify(f), binary: true })) },
);

/** Frames that answer a client message (the rest: welcome, events, pings, warnings). */
const ANSWERS = new Set(['error', 'subscribed', 'unsubscribed', 'pong']);

describe('fuzzed client messages', () => {
  it('answers each with one frame, errors in the spec form, and the connection keeps answering', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 5 }), async (messages) => {
        const client = await Client.open(url, key);
        try {
          for (const m of messages) client.socket.send(m.binary ? Buffer.from(m.data) : m.data, { binary: m.binary });
          client.send({ type: 'ping' });
          // One answer per message, and the ping's pong: the connection still works after them.
          const answers = await waitFor(() => {
            const got = client.frames.filter((f) => ANSWERS.has(f.type));
            return got.length === messages.length + 1 && got;
          }, `${messages.length + 1} answers`);
          expect(answers.filter((f) => f.type === 'pong').length).toBeGreaterThan(0);
          for (const error of answers.filter((f) => f.type === 'error')) {
            expect(ERROR_STATUS[error.code as ErrorCode], JSON.stringify(error)).toBeLessThan(500);
            expect(error.message).toMatch(/\S/);
            if (error.code === 'VALIDATION') expect(error.details.issues.length).toBeGreaterThan(0);
          }
          expect(client.closed).toBeNull();
        } finally {
          client.close();
          // The key's connection limit (10) counts sockets until the server has seen them close.
          await waitFor(() => server.connectionCount() === 0, 'the fuzzed connection closed');
        }
      }),
      fuzzRuns(60),
    );
  });

  it('still serves a well-formed client its events after the fuzzing', async () => {
    const client = await Client.open(url, key);
    await client.subscribe(['signal.created'], ['$ALPHA']);
    const event = publicEvent('signal.created', 'tk_alpha');
    await world.publish(event);
    await client.next((f) => f.type === 'event' && f.id === event.eventId, 'the event');
    client.close();
  });
});
