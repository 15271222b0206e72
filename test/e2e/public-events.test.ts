import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { presentSignal } from '../../presenters/signal.ts';
import { toWire } from '../../presenters/wire.ts';
import { publicEvents } from '../../processors/public-events/public-events.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { snakeKeys } from '../../infra/store/snake-keys.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { DeadLetter, PublicEvent, Signal, TokenMeta } from '../../schemas/records.ts';
import { runQuantToEnd } from '../helpers/pipeline.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * The public-events processor through the real runtime over a simulated day: every event
 * encodes and validates (nothing dead-lettered), a signal's data is the signal object as
 * the API presents it, and a second run from scratch gives the same events byte for byte,
 * the first with the state in the task's store on disk, the second in Maps.
 */

let dir: string;
let log: FileEventLog;
let codec: Codec;

/** `keyed`: the state in the task's store on disk, checkpointed per key; otherwise in Maps, checkpointed whole. */
async function runToEnd(stateDir: string, keyed: boolean): Promise<void> {
  const checkpoints = keyed ? localCheckpoints(join(dir, stateDir), publicEvents, silentLogger) : new FileCheckpoints(join(dir, stateDir));
  const runtime = new ProcessorRuntime({ processor: publicEvents, log, codec, checkpoints, logger: silentLogger });
  void runtime.start();
  await waitFor(() => runtime.caughtUp(), 'the public-events processor', 120_000);
  await runtime.stop();
}

async function decoded<T>(topic: string): Promise<T[]> {
  return Promise.all((await readTopic(log, topic)).map((r) => codec.decode(topic, r.value!) as Promise<T>));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-public-events-'));
  ({ log, codec } = await openEmbedded(dir));
  await seedHistory({ log, codec, dataDir: dir, seed: 7, days: 1, endMs: Date.UTC(2026, 3, 1), tokens: 20, authors: 150 });
  await runQuantToEnd(dir, log, codec);
}, 240_000);

afterAll(async () => {
  await log?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('public events over a simulated day', () => {
  it('derives valid events with the API serialisation and the same ids and bytes on a second run', async () => {
    await runToEnd('state-a', true);
    const first = await decoded<PublicEvent>(TOPICS.publicEvents.name);
    const types = new Set(first.map((e) => e.type));
    expect(types).toContain('token.score.updated');
    expect(types).toContain('signal.created');
    const letters = (await decoded<DeadLetter>(TOPICS.deadLetters.name)).filter((d) => d.stage === publicEvents.name);
    expect(letters).toEqual([]);
    expect(new Set(first.map((e) => e.eventId)).size).toBe(first.length);

    const signals = await decoded<Signal>(TOPICS.signals.name);
    const tokens = new Map((await decoded<TokenMeta>(TOPICS.tokens.name)).map((t) => [t.tokenId, snakeKeys(t)]));
    const created = first.find((e) => e.type === 'signal.created')!;
    const signal = signals.find((s) => s.status === 'active' && JSON.parse(created.data).id === s.signalId)!;
    expect(JSON.parse(created.data)).toEqual(toWire(presentSignal(signal, tokens)));

    // From scratch (no checkpoint), the tables in Maps: the same events again, so subscribers deduplicate on the ids.
    await runToEnd('state-b', false);
    const all = await decoded<PublicEvent>(TOPICS.publicEvents.name);
    const times = new Map<string, number>();
    for (const e of all) times.set(JSON.stringify(e), (times.get(JSON.stringify(e)) ?? 0) + 1);
    expect(all).toHaveLength(2 * first.length);
    for (const e of first) expect(times.get(JSON.stringify(e)), e.eventId).toBe(2);
  });
});
