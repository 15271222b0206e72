import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { HistorySource } from '../../research/history/source.ts';
import { storeHistory } from '../../research/history/store.ts';
import { HOUR, MIN, T0, embeddedStore, series } from '../../research/history/testing/given.ts';
import { BacktestRunner } from '../../research/runner/backtest-runner.ts';
import { appendBacktestRequest } from '../../research/runs/commands.ts';
import type { StoredSpec } from '../../research/runs/stored-spec.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { BacktestEventsPart, BacktestRequest, BacktestRunEvent } from '../../schemas/records.ts';
import { joinEvents } from '../../projections/read-models/backtest-events.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * The research role's runner on the embedded log over a hand-made history in a real store.
 * The history is held until the run is aborted, so a run stays `running` until then:
 * a cancel then ends it `canceled`, and a runner stopped with it in hand leaves it unfinished
 * for the next runner, which runs it again (attempt 2) to the result an uninterrupted run gives.
 */

let dir: string;
let log: FileEventLog;
let codec: Codec;
let history: HistorySource;
let closeStore: () => Promise<void>;

/** The history, with every candidates scan held until the run is aborted: a run that reads it stays `running` until canceled or stopped. */
function heldUntilAborted(): HistorySource {
  return {
    ...history,
    async *candidates(query, options) {
      const signal = options!.signal!;
      await new Promise((resolve) => (signal.aborted ? resolve(undefined) : signal.addEventListener('abort', resolve, { once: true })));
      yield* history.candidates(query, options);
    },
  };
}

const SPEC: StoredSpec = { rules: [{ field: 'momentum', op: '>=', value: 50 }], horizon: '1h', from: null, to: null, cooldown: '1h', deadTokenPolicy: 'last_price', universe: {} };

let n = 0;
async function request(action: 'queue' | 'cancel', runId = `btr_${String(++n).padStart(24, '0')}`, keyId = 'key_runner'): Promise<string> {
  const at = T0 + 10 * HOUR;
  const r: BacktestRequest = {
    runId, action, version: action === 'queue' ? 1 : 2, keyId, teamId: null, dataset: 'live', plan: 'pro', name: null,
    spec: JSON.stringify(SPEC), createdAt: at, cancelRequestedAt: action === 'cancel' ? at : null, ts: at,
  };
  await appendBacktestRequest(log, codec, r);
  return runId;
}

async function eventsOf(runId: string): Promise<BacktestRunEvent[]> {
  const all = await Promise.all((await readTopic(log, TOPICS.backtestRuns.name)).map((r) => codec.decode(r.topic, r.value!) as Promise<BacktestRunEvent>));
  return all.filter((e) => e.runId === runId);
}

async function partsOf(runId: string): Promise<BacktestEventsPart[]> {
  const all = await Promise.all((await readTopic(log, TOPICS.backtestEvents.name)).map((r) => codec.decode(r.topic, r.value!) as Promise<BacktestEventsPart>));
  return all.filter((p) => p.runId === runId);
}

const ended = (runId: string) => waitFor(async () => (await eventsOf(runId)).find((e) => e.status !== 'running'), `${runId} to end`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-research-runner-'));
  ({ log, codec } = await openEmbedded(dir));
  const snapshots = ['tk_a', 'tk_b', 'tk_c'].flatMap((token, k) =>
    series(token, T0, T0 + 3 * 24 * HOUR, 5 * MIN, (_, i) => ({ price: 1 + 0.01 * ((i * (k + 3)) % 17), fields: { momentum: (i * 7 + k * 11) % 100 } })),
  );
  const store = await embeddedStore(snapshots);
  history = storeHistory(store);
  closeStore = () => store.close();
});

afterAll(async () => {
  await closeStore?.();
  await log?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the backtest runner', () => {
  it('runs a request to done, and a second identical one to the same result', async () => {
    const runner = new BacktestRunner({ log, codec, history, logger: silentLogger });
    await runner.start();
    const a = await ended(await request('queue'));
    const b = await ended(await request('queue'));
    await runner.stop();
    expect([a.status, b.status]).toEqual(['done', 'done']);
    expect(JSON.parse(a.result!).n).toBeGreaterThan(0);
    expect(b.result).toBe(a.result);
    expect(a.scanned).toBe(a.total);
  });

  it("records a result's events in parts under the size limit, which join back to the whole result", async () => {
    const runner = new BacktestRunner({ log, codec, history, logger: silentLogger, eventsPartBytes: 4_096 });
    await runner.start();
    const small = await ended(await request('queue'));
    await runner.stop();
    const parts = await partsOf(small.runId);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i));
    for (const part of parts) expect(Buffer.byteLength(part.events)).toBeLessThanOrEqual(4_096);
    // The same request recorded with the default part size: one part; both join to one result.
    const reference = (await eventsOf(`btr_${String(1).padStart(24, '0')}`)).find((e) => e.status === 'done')!;
    const whole = (run: BacktestRunEvent, of: BacktestEventsPart[]) => JSON.parse(joinEvents(run.result!, of.map((p) => p.events))) as { n: number; events: unknown[] };
    const joined = whole(small, parts);
    expect(joined).toEqual(whole(reference, await partsOf(reference.runId)));
    expect(joined.events).toHaveLength(joined.n);
  });

  it('cancels a running run when its cancel arrives', async () => {
    const runner = new BacktestRunner({ log, codec, history: heldUntilAborted(), logger: silentLogger });
    await runner.start();
    const id = await request('queue');
    await waitFor(async () => (await eventsOf(id)).some((e) => e.status === 'running'), 'the run to start');
    await request('cancel', id);
    const end = await ended(id);
    await runner.stop();
    expect(end).toMatchObject({ status: 'canceled', reason: 'canceled by its owner', result: null, attempt: 1 });
  });

  it('leaves a run stopped in hand for the next runner, which runs it again to the same result', async () => {
    const runner = new BacktestRunner({ log, codec, history: heldUntilAborted(), logger: silentLogger });
    await runner.start();
    const id = await request('queue');
    await waitFor(async () => (await eventsOf(id)).some((e) => e.status === 'running'), 'the run to start');
    await runner.stop();
    expect((await eventsOf(id)).map((e) => e.status)).toEqual(['running']);

    const next = new BacktestRunner({ log, codec, history, logger: silentLogger });
    await next.start();
    const end = await ended(id);
    await next.stop();
    const reference = (await eventsOf(`btr_${String(1).padStart(24, '0')}`)).find((e) => e.status === 'done')!;
    expect(end).toMatchObject({ status: 'done', attempt: 2, asOf: (await eventsOf(id))[0].asOf });
    expect(end.result).toBe(reference.result);
  });

  it("refuses, in the log's order, a run past the key's plan limit that two API processes each let pass", async () => {
    const runner = new BacktestRunner({ log, codec, history: heldUntilAborted(), logger: silentLogger, concurrentRunsOf: (plan) => (plan === 'pro' ? 2 : 5) });
    await runner.start();
    // Appended as two API processes would, each after its own check saw room for one more.
    const key = 'key_two_apis';
    const [running, queued, third] = [await request('queue', undefined, key), await request('queue', undefined, key), await request('queue', undefined, key)];
    const refused = await ended(third);
    expect(refused).toMatchObject({ status: 'failed', result: null, attempt: 1 });
    expect(refused.reason).toMatch(/^LIMIT_REACHED: the key had 2 runs queued or running when this one came/);
    // The two within the limit are untouched: one running, one queued behind it.
    await waitFor(async () => (await eventsOf(running)).length > 0, 'the first run to start');
    expect((await eventsOf(running)).map((e) => e.status)).toEqual(['running']);
    expect(await eventsOf(queued)).toEqual([]);
    // A place freed, the key's next run is taken.
    await request('cancel', queued, key);
    expect((await ended(queued)).status).toBe('canceled');
    const next = await request('queue', undefined, key);
    await request('cancel', running, key);
    await waitFor(async () => (await eventsOf(next)).some((e) => e.status === 'running'), 'the next run to start');
    await request('cancel', next, key);
    await ended(next);
    await runner.stop();
  });
});
