import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokenLookup } from '../../processors/quant-engine/authors/test-support.ts';
import type { Mention } from '../../processors/quant-engine/contracts.ts';
import {
  advanceTo,
  createNarrativesState,
  lateMentions,
  NARRATIVES_TOPIC,
  narrativeShareChanges,
  narrativeShares,
  onMention,
  type NarrativesState,
} from '../../processors/quant-engine/narratives/narratives.ts';
import { HOUR, mention, MIN, recordingEmitter, seededRandom, T0 } from '../../processors/quant-engine/tokens/fixtures.ts';
import type { OutputRecord } from '../../processors/runtime/processor.ts';
import { TaskStateStore } from '../../processors/runtime/state/task-store.ts';
import type { NarrativeBucket } from '../../schemas/records/quant-social.ts';

/**
 * The narratives module over a task's store on disk (processors/runtime/state): given the same
 * mentions, the buckets it publishes and the shares it serves equal those of its state held in
 * Maps, however often the store commits and is reopened; a commit after one mention writes a
 * few keys, and one after an hour closes writes that hour's keys, not the history.
 */

const DAY = 24 * HOUR;
const DAYS = 4;
/** Narrative → its tokens; `late-comer` is first mentioned on day 3. */
const NARRATIVES: Record<string, string[]> = {
  'ai-agents': ['tk_a1', 'tk_a2', 'tk_a3', 'tk_a4', 'tk_a5', 'tk_a6', 'tk_a7'],
  memes: ['tk_m1', 'tk_m2', 'tk_m3'],
  defi: ['tk_d1', 'tk_d2'],
  gaming: ['tk_g1'],
  'late-comer': ['tk_l1'],
};
const tokens = tokenLookup(
  Object.fromEntries(Object.entries(NARRATIVES).flatMap(([narrative, ids]) => ids.map((id) => [id, { narrative }]))),
);
const AUTHORS = 60;

/** An event of the module: a mention, or event time passing without one. */
type Step = { mention: Mention } | { advance: number };

/**
 * Posts every 2 minutes or so by 60 authors (a few of them prolific), naming 1 to 3 tokens of
 * a narrative, with quiet hours on day 2, late posts (from before the open hour) now and then,
 * and the last narrative joining on day 3.
 */
function input(): Step[] {
  const random = seededRandom(11);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  const steps: Step[] = [];
  const narratives = Object.keys(NARRATIVES);
  for (let t = T0 + MIN; t < T0 + DAYS * DAY; t += Math.floor(random() * 4 * MIN) + 1) {
    if (t > T0 + DAY + 5 * HOUR && t < T0 + DAY + 11 * HOUR) {
      steps.push({ advance: t });
      t += 30 * MIN;
      continue;
    }
    const ts = random() < 0.02 ? t - 90 * MIN : t;
    const authorId = `au_${Math.floor(random() ** 2 * AUTHORS)}`;
    const joined = t >= T0 + 3 * DAY ? narratives : narratives.slice(0, -1);
    const narrative = pick(joined);
    const named = new Set(Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(NARRATIVES[narrative])));
    for (const tokenId of named) steps.push({ mention: mention(tokenId, authorId, ts) });
  }
  steps.push({ advance: T0 + DAYS * DAY });
  return steps;
}

/** Applies the steps as the engine does; the outputs are the buckets and, after each step, the shares served. */
function run(state: NarrativesState, steps: Step[], out: unknown[]): void {
  const emitter = recordingEmitter();
  const shares = narrativeShares(state);
  const changes = narrativeShareChanges(state);
  for (const step of steps) {
    const t = 'advance' in step ? step.advance : step.mention.ts;
    advanceTo(state, t, emitter, tokens);
    if ('mention' in step) onMention(state, step.mention, tokens);
    out.push(...emitter.outputs.splice(0));
    out.push(Object.keys(NARRATIVES).map((n) => [shares.attentionShare(n), changes.attentionShareChange24h(n)]));
  }
}

const buckets = (out: unknown[]) => (out.filter((o) => (o as OutputRecord).topic === NARRATIVES_TOPIC) as OutputRecord[]).map((o) => o.value as NarrativeBucket);

describe('the narratives module over a task store', () => {
  let dir: string;
  const steps = input();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-narratives-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('publishes and serves what the state in Maps does, with the store committed and reopened at every 500 steps', async () => {
    const inMaps: unknown[] = [];
    const mapsState = createNarrativesState();
    run(mapsState, steps, inMaps);

    const file = join(dir, 'narratives.lmdb');
    const fromStore: unknown[] = [];
    const every = 500;
    expect(steps.length).toBeGreaterThan(5 * every);
    for (let from = 0; from < steps.length; from += every) {
      // No cache: every value is read back from the file, so a change not set again is lost.
      const { store } = await TaskStateStore.open(file, 1, 0);
      run(createNarrativesState(store), steps.slice(from, from + every), fromStore);
      store.commit({ positions: { 'in#0': from + every }, maxEventTime: 0 });
      await store.close();
    }

    const published = buckets(inMaps);
    // Every hour of the 4 days, for the 4 narratives from the start and the last one from day 3.
    expect(published.length).toBe(DAYS * 24 * 4 + 24);
    expect(published.filter((b) => b.theses === 0).length).toBeGreaterThanOrEqual(6 * 4); // the quiet hours
    expect(published.some((b) => b.theses < b.mentions)).toBe(true);
    expect(published.filter((b) => b.attentionShareChange24h !== null).length).toBeGreaterThan(24 * 4);
    expect(published.some((b) => b.topContributors.length === 5 && b.topContributors[0].posts > 1)).toBe(true);
    expect(lateMentions(mapsState)).toBeGreaterThan(10);
    expect(fromStore).toEqual(inMaps);
  });

  it('commits the keys one mention changed, and an hour closing writes that hour, leaving no post behind', async () => {
    const { store } = await TaskStateStore.open(join(dir, 'narratives.lmdb'), 1);
    const state = createNarrativesState(store);
    const out: unknown[] = [];
    run(state, steps, out);
    store.commit({ positions: {}, maxEventTime: 0 });
    const open = T0 + DAYS * DAY;

    // A known author's new post in the open hour: the narrative's track, the author, the post.
    run(state, [{ mention: mention('tk_m1', 'au_1', open + MIN) }], out);
    expect(store.commit({ positions: {}, maxEventTime: 0 }).keysWritten).toBe(3);
    // The same post naming another token of the narrative: the track and the author again.
    run(state, [{ mention: mention('tk_m2', 'au_1', open + MIN) }], out);
    expect(store.commit({ positions: {}, maxEventTime: 0 }).keysWritten).toBe(2);

    // The hour closes: the clock, every narrative's track, and per narrative the hour's authors
    // (their posts let go) and its posts (deleted).
    run(state, [{ advance: open + HOUR }], out);
    const closed = buckets(out).filter((b) => b.bucketStart === open);
    expect(closed.map((b) => b.theses)).toEqual([0, 0, 0, 0, 1]);
    const hourKeys = closed.reduce((n, b) => n + b.uniqueAuthors + b.theses, 0);
    expect(store.commit({ positions: {}, maxEventTime: 0 }).keysWritten).toBe(1 + closed.length + hourKeys);
    expect([...store.table('narratives-posts').entries()]).toEqual([]);
    // One entry per narrative and author ever seen in it, however many hours they posted in.
    expect([...store.table('narratives-authors').entries()].length).toBeLessThanOrEqual(Object.keys(NARRATIVES).length * AUTHORS);
    await store.close();
  });
});
