import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFeaturesState, FEATURES_TOPIC, featuresPriceLookup, SNAPSHOT_GRID_MS } from '../../processors/quant-engine/features/features.ts';
import { createPipeline, feed, type Pipeline, type WorldEvent } from '../../processors/quant-engine/features/pipeline-fixture.ts';
import { HOUR, MIN, post, seededRandom, T0, tick, tokenMeta } from '../../processors/quant-engine/tokens/fixtures.ts';
import type { OutputRecord } from '../../processors/runtime/processor.ts';
import { TaskStateStore } from '../../processors/runtime/state/task-store.ts';
import type { FeatureSnapshot } from '../../schemas/records/quant-market.ts';

/**
 * The features module over a task's store on disk (processors/runtime/state): given the same
 * events, the snapshots it emits and the prices it tells equal those of its state held in
 * Maps, however often the store commits and is reopened; and a commit writes the keys the
 * events since the last one changed, not the state.
 */

const DAY = 24 * HOUR;
const DAYS = 4;
const TOKENS = ['tk_1', 'tk_2', 'tk_3', 'tk_4', 'tk_5'];
/** Listed on the second day: it joins the registry's order of snapshots mid-run. */
const LATE_LISTED = 'tk_6';
/** Falls silent after the first day: hourly snapshots, its windows expire and compact. */
const SILENT = 'tk_5';
const STATE_VERSION = 1;
const CHUNK = 800;
/**
 * Commits between reopenings, and a cache of a few values: a value changed in place but not
 * set again would then be lost (dropped from the cache, or not in the commit before a
 * reopening) and the outputs would differ.
 */
const COMMIT_EVERY = 10;
const CACHE_ENTRIES = 8;

/**
 * Ticks and posts of 30 authors (some re-mentioning a token, some posts naming two tokens)
 * every 0-2 minutes over four days, 5% of them arriving up to 40 minutes late; fed in arrival order.
 */
function events(): WorldEvent[] {
  const random = seededRandom(11);
  const timed: { at: number; event: WorldEvent }[] = TOKENS.map((id) => ({ at: T0, event: { kind: 'meta', value: tokenMeta(id, id.toUpperCase(), T0) } }));
  const listedAt = T0 + 30 * HOUR;
  timed.push({ at: listedAt, event: { kind: 'meta', value: tokenMeta(LATE_LISTED, 'TK_6', listedAt) } });
  const all = [...TOKENS, LATE_LISTED];
  const price = all.map(() => 1);
  let posts = 0;
  for (let t = T0 + 1; t < T0 + DAYS * DAY; t += 1 + Math.floor(random() * 2 * MIN)) {
    const live = all.filter((id) => (id !== SILENT || t < T0 + DAY) && (id !== LATE_LISTED || t > listedAt));
    const k = Math.floor(random() * live.length);
    const tokenId = live[k];
    const delay = random() < 0.05 ? Math.floor(random() * 40 * MIN) : 0;
    let event: WorldEvent;
    if (random() < 0.5) {
      const i = all.indexOf(tokenId);
      price[i] *= Math.exp((random() - 0.5) * 0.05);
      event = { kind: 'tick', value: tick(tokenId, t, price[i], { volumeUsd: random() * 1000, trades: Math.floor(random() * 9), liquidityUsd: random() * 1e5 }) };
    } else {
      const refs = random() < 0.2 ? [tokenId, live[(k + 1) % live.length]] : [tokenId];
      event = { kind: 'post', value: post(`po_${posts++}`, `au_${Math.floor(random() * 30)}`, t, refs, { likes: Math.floor(random() * 50) }) };
    }
    timed.push({ at: t + delay, event });
  }
  return timed.sort((a, b) => a.at - b.at).map((e) => e.event);
}

const scores: Record<string, number> = { au_1: 90, au_2: 20, au_3: 60 };

function pipeline(): Pipeline {
  return createPipeline({ researchScore: (a) => scores[a] ?? null }, { attentionShare: (n) => (n === 'ai-agents' ? 0.4 : null) });
}

/** Every token's latest price as the module tells it, once per chunk of events. */
function prices(p: Pipeline): (number | null)[] {
  const lookup = featuresPriceLookup(p.features);
  return [...TOKENS, LATE_LISTED].map((id) => lookup.lastPrice(id));
}

function snapshotsIn(outputs: OutputRecord[]): FeatureSnapshot[] {
  return outputs.filter((o) => o.topic === FEATURES_TOPIC).map((o) => o.value as FeatureSnapshot);
}

describe('the features module over a task store', () => {
  let dir: string;
  const input = events();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-features-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(`emits what the state in Maps emits, with the store committed every ${COMMIT_EVERY} events and reopened every ${CHUNK}`, async () => {
    const inMaps = pipeline();
    const mapPrices: (number | null)[][] = [];
    for (let from = 0; from < input.length; from += CHUNK) {
      for (const event of input.slice(from, from + CHUNK)) feed(inMaps, event);
      mapPrices.push(prices(inMaps));
    }

    // The other modules stay in memory: only the features state goes through the store.
    const fromStore = pipeline();
    const storePrices: (number | null)[][] = [];
    const file = join(dir, 'features.lmdb');
    let reopenings = 0;
    for (let from = 0; from < input.length; from += CHUNK) {
      const { store } = await TaskStateStore.open(file, STATE_VERSION, CACHE_ENTRIES);
      fromStore.features = createFeaturesState(store);
      input.slice(from, from + CHUNK).forEach((event, i) => {
        feed(fromStore, event);
        if ((i + 1) % COMMIT_EVERY === 0) store.commit({ positions: { 'in#0': from + i + 1 }, maxEventTime: -Infinity });
      });
      storePrices.push(prices(fromStore));
      store.commit({ positions: { 'in#0': from + CHUNK }, maxEventTime: -Infinity });
      await store.close();
      reopenings++;
    }

    expect(reopenings).toBeGreaterThanOrEqual(5);
    const snapshots = snapshotsIn(inMaps.emitter.outputs);
    // Most of four days' 5-minute grid times for each busy token (an event every 5 minutes or so each).
    expect(snapshots.length).toBeGreaterThan(3000);
    expect(snapshots.filter((s) => s.features.late_events_24h! > 0).length).toBeGreaterThan(100);
    expect(snapshots.some((s) => s.features.new_author_share_1h! > 0 && s.features.new_author_share_1h! < 1)).toBe(true);
    expect(snapshots.some((s) => s.tokenId === LATE_LISTED)).toBe(true);
    const silent = snapshots.filter((s) => s.tokenId === SILENT && s.ts > T0 + 3 * DAY);
    expect(silent.map((s) => s.ts - silent[0].ts)).toEqual(silent.map((_, i) => i * HOUR));
    expect(silent[0].features).toMatchObject({ mentions_24h: 0, volume_24h: 0 });
    expect(fromStore.emitter.outputs).toEqual(inMaps.emitter.outputs);
    expect(storePrices).toEqual(mapPrices);
  });

  it('commits only the keys the events since the last commit changed', async () => {
    const { store } = await TaskStateStore.open(join(dir, 'features.lmdb'), STATE_VERSION);
    const p = pipeline();
    p.features = createFeaturesState(store);
    for (const event of input) feed(p, event);
    // Every token, every author-token pair seen, the clock.
    expect(store.commit({ positions: {}, maxEventTime: -Infinity }).keysWritten).toBeGreaterThan(100);

    const now = Math.max(...input.map((e) => e.value.ts));
    const nextGrid = Math.ceil(now / SNAPSHOT_GRID_MS) * SNAPSHOT_GRID_MS;
    expect(now + 2).toBeLessThan(nextGrid);

    // A tick at the latest time: no grid time passed, the clock unchanged; its token and its hour's block of ticks.
    feed(p, { kind: 'tick', value: tick('tk_1', now, 2) });
    expect(store.commit({ positions: {}, maxEventTime: now }).keysWritten).toBe(2);

    // A mention by an author new to the token, a moment later: its token, the author's first mention of it, the clock.
    feed(p, { kind: 'post', value: post('po_new', 'au_new', now + 1, ['tk_2']) });
    expect(store.commit({ positions: {}, maxEventTime: now + 1 }).keysWritten).toBe(3);

    // The same author again: its token and the clock; when it first mentioned the token stands.
    feed(p, { kind: 'post', value: post('po_again', 'au_new', now + 2, ['tk_2']) });
    expect(store.commit({ positions: {}, maxEventTime: now + 2 }).keysWritten).toBe(2);

    // A tick past the next grid time: the tokens snapshotted at it (which include the tick's),
    // the tick's block, the clock, and the blocks of ticks the windows left behind (deleted).
    const before = p.emitter.outputs.length;
    const blocksBefore = [...p.features.ticks.entries()].length;
    // Four days of ticks, kept from the hour before each busy token's 24 h window (the late-listed one in), and the silent token's last hour.
    expect(blocksBefore).toBeLessThanOrEqual(TOKENS.length * 26 + 1);
    feed(p, { kind: 'tick', value: tick('tk_1', nextGrid + 1, 2) });
    const snapshotted = snapshotsIn(p.emitter.outputs.slice(before)).map((s) => s.tokenId);
    expect(snapshotted).toContain('tk_1');
    expect(snapshotted).toContain('tk_2');
    const tickHourIsNew = Math.floor((nextGrid + 1) / HOUR) !== Math.floor(now / HOUR);
    const blocksDeleted = blocksBefore + (tickHourIsNew ? 1 : 0) - [...p.features.ticks.entries()].length;
    expect(store.commit({ positions: {}, maxEventTime: nextGrid + 1 }).keysWritten).toBe(snapshotted.length + 1 + 1 + blocksDeleted);
    await store.close();
  });
});
