import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../infra/feeds/sim/prng.ts';
import { createStoredPool, poolOf, takeResolution, takeSnapshot, type StoredPool } from '../../processors/analogs/stored-pool.ts';
import { candidateColumns, poolPosition, queryAnalogs, type AnalogQuery, type AnalogsState } from '../../processors/quant-engine/analogs/analogs.ts';
import type { AnalogInputs } from '../../processors/quant-engine/analogs/vector.ts';
import type { OutcomeResolution } from '../../processors/quant-engine/contracts.ts';
import { randomInputs } from '../../processors/quant-engine/analogs/test-support.ts';
import { IN_MEMORY_TABLES } from '../../processors/runtime/state/tables.ts';
import { TaskStateStore } from '../../processors/runtime/state/task-store.ts';

/**
 * The analogs stage's pool kept in a task's store (processors/analogs/stored-pool.ts): built
 * again from the store after every commit and reopen, it holds and answers exactly what the
 * pool kept in memory all along does, through the index's rebuilds; and a commit writes what
 * changed (the filling block, the waiting snapshots, the position), not the pool.
 */

const STEP = 5 * 60_000;
const DAY = 24 * 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const TOKENS = 12;

type Event = { kind: 'snapshot'; snapshotId: string; tokenId: string; ts: number; inputs: AnalogInputs } | { kind: 'resolution'; resolution: OutcomeResolution };

/** A snapshot of about half the tokens every 5 minutes, most resolved 24 h later in time order, some never (no price). */
function events(steps: number): Event[] {
  const random = seededRandom(21);
  const level = (n: number) => Math.floor(random() * n);
  const maybe = (x: number) => (random() < 0.1 ? null : x);
  const out: Event[] = [];
  const waiting: { snapshotId: string; tokenId: string; ts: number }[] = [];
  for (let step = 0; step < steps; step++) {
    const t = T0 + step * STEP;
    while (waiting.length > 0 && waiting[0].ts + DAY <= t) {
      const s = waiting.shift()!;
      const resolution: OutcomeResolution = {
        subject: { kind: 'snapshot', subjectId: s.snapshotId, tokenId: s.tokenId, ts: s.ts, entryPrice: 1 },
        horizon: '24h',
        resolvedAt: s.ts + DAY,
        forwardReturn: maybe((level(21) - 10) / 10),
        maxDrawdown: -level(10) / 10,
        peakReturn: null,
        timeToPeakMs: null,
        died: false,
        lastPrice: null,
      };
      out.push({ kind: 'resolution', resolution });
    }
    for (let tk = 0; tk < TOKENS; tk++) {
      if (random() < 0.5) continue;
      const snapshot = { snapshotId: `snap_${step}_${tk}`, tokenId: `tk_${tk}`, ts: t };
      out.push({ kind: 'snapshot', ...snapshot, inputs: randomInputs(random) });
      if (random() < 0.9) waiting.push(snapshot);
    }
  }
  return out;
}

function apply(pool: StoredPool, list: Event[]): void {
  for (const e of list) {
    if (e.kind === 'snapshot') takeSnapshot(pool, { snapshotId: e.snapshotId, tokenId: e.tokenId, ts: e.ts }, e.inputs);
    else takeResolution(pool, e.resolution);
  }
}

/** What the pool holds and how it answers: its position, its candidates, and the neighbours of a few queries. */
function view(pool: AnalogsState, at: number) {
  const queries: AnalogQuery[] = [0, 3, 7].map((tk) => ({ tokenId: `tk_${tk}`, ts: at, inputs: { momentum: 50, crowding: 100, earlyQuality: 25, narrativeVelocity: null, priceChange1h: 0, volumeAcceleration: 1, liquidityUsd: 10_000 } }));
  return { position: poolPosition(pool), candidates: candidateColumns(pool), answers: queries.map((q) => queryAnalogs(pool, q, 40)) };
}

describe("the analogs stage's pool in a task store", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-pool-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('is built again from the store at every reopen holding and answering what the pool in memory does', async () => {
    const all = events(6 * 288); // 6 days
    const inMemory = createStoredPool(IN_MEMORY_TABLES);
    const file = join(dir, 'analogs.lmdb');
    const chunk = 1_500;
    for (let from = 0; from < all.length; from += chunk) {
      const part = all.slice(from, from + chunk);
      apply(inMemory, part);
      const { store } = await TaskStateStore.open(file, 1);
      const stored = createStoredPool(store);
      apply(stored, part);
      store.commit({ positions: { 'in#0': from + part.length }, maxEventTime: from });
      await store.close();
      const reopened = (await TaskStateStore.open(file, 1)).store;
      const at = T0 + 7 * DAY;
      expect(view(poolOf(createStoredPool(reopened)), at)).toEqual(view(poolOf(inMemory), at));
      await reopened.close();
    }
    const { position } = view(poolOf(inMemory), T0);
    // Past several rebuilds of the index, with a tail and snapshots still waiting.
    expect(position.indexed).toBeGreaterThan(4_000);
    expect(position.candidates).toBeGreaterThan(position.indexed);
    expect(position.pendingNext - position.pendingHead).toBeGreaterThan(0);
  });

  it('commits the block that fills, the snapshots taken in or out and the position, not the pool', async () => {
    const all = events(4 * 288);
    const { store } = await TaskStateStore.open(join(dir, 'analogs.lmdb'), 1);
    const pool = createStoredPool(store);
    const cut = all.length - 40;
    apply(pool, all.slice(0, cut));
    const first = store.commit({ positions: {}, maxEventTime: 0 }).keysWritten;
    const next = all.slice(cut);
    apply(pool, next);
    const snapshots = next.filter((e) => e.kind === 'snapshot').length;
    const resolutions = next.length - snapshots;
    const { keysWritten } = store.commit({ positions: {}, maxEventTime: 1 });
    // At most: a key per snapshot taken in, one per resolution (the snapshot it resolved) and the snapshots passed over, two blocks, the position.
    expect(keysWritten).toBeLessThanOrEqual(snapshots + 2 * resolutions + 3);
    expect(first).toBeGreaterThan(poolPosition(poolOf(pool)).candidates / 64);
    await store.close();
  });

  it('refuses a store whose blocks and position disagree, saying how to rebuild the state', async () => {
    const file = join(dir, 'analogs.lmdb');
    const { store } = await TaskStateStore.open(file, 1);
    apply(createStoredPool(store), events(2 * 288));
    store.commit({ positions: {}, maxEventTime: 0 });
    const damaged = createStoredPool(store);
    damaged.blocks.delete('0');
    expect(() => poolOf(damaged)).toThrow(/holds? \d+ candidates where its position says \d+: .*delete <TQA_DATA_DIR>\/state\/analogs\//);
    await store.close();
  });
});
