import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  advanceTo,
  AUTHOR_METRICS_TOPIC,
  authorDirectory,
  authorQuality,
  CALLS_TOPIC,
  createAuthorsState,
  crowdLookup,
  onMention,
  onOutcome,
  type AuthorsState,
} from '../../processors/quant-engine/authors/authors.ts';
import { mention, tokenLookup } from '../../processors/quant-engine/authors/test-support.ts';
import type { PriceLookup } from '../../processors/quant-engine/contracts.ts';
import { advanceOutcomes, createOutcomesState, outcomesOnTick, trackSubject } from '../../processors/quant-engine/outcomes/outcomes.ts';
import { HOUR, MIN, recordingEmitter, seededRandom, T0, tick } from '../../processors/quant-engine/tokens/fixtures.ts';
import { TaskStateStore } from '../../processors/runtime/state/task-store.ts';
import type { AuthorMetrics, MarketTick, Mention } from '../../schemas/records.ts';

/**
 * The authors module over a task's store on disk (processors/runtime/state): given the same
 * mentions and outcomes, it emits what its state held in Maps emits, and its lookups answer
 * the same, however often the store commits and is reopened; and a commit after one mention
 * writes the few keys that mention changed, not an author's history.
 */

const DAY = 24 * HOUR;
const DAYS = 10;
const PRICED = Array.from({ length: 24 }, (_, i) => `tk_p${String(i).padStart(2, '0')}`);
const UNPRICED = Array.from({ length: 150 }, (_, i) => `tk_u${String(i).padStart(3, '0')}`);
const AUTHORS = Array.from({ length: 300 }, (_, i) => `au_${String(i).padStart(3, '0')}`);
const PROLIFIC = AUTHORS.slice(0, 4);
const NARRATIVES = ['ai-agents', 'memes', 'defi', 'gaming'];
/** Its liquidity collapses on day 3: the calls on it before then die. */
const RUGGED = 'tk_p05';

const tokens = tokenLookup(Object.fromEntries([...PRICED, ...UNPRICED, 'tk_new'].map((id, i) => [id, { narrative: NARRATIVES[i % NARRATIVES.length] }])));

type Event = { at: number; tick: MarketTick } | { at: number; mention: Mention };

/** au_010 renames itself on day 4; au_011 takes its old handle, in capitals, on day 6. */
function handleOf(authorId: string, ts: number): string {
  if (authorId === 'au_010') return ts < T0 + 4 * DAY ? 'h_au_010' : 'h_renamed';
  if (authorId === 'au_011' && ts >= T0 + 6 * DAY) return 'H_AU_010';
  return `h_${authorId}`;
}

/**
 * Ten days: the priced tokens tick every 10 minutes; four prolific authors post every 20
 * minutes (half of it on unpriced tokens, so they make over 128 calls each); a random author
 * posts about every other minute, now and then a few minutes late; and every 8 hours two
 * authors call a token that a crowd of 12 piles into three hours later.
 */
function input(): Event[] {
  const random = seededRandom(11);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const events: Event[] = [];
  let posts = 0;
  const say = (at: number, authorId: string, tokenId: string, ts = at) =>
    events.push({ at, mention: { ...mention(authorId, tokenId, ts, `po_${++posts}`), authorHandle: handleOf(authorId, ts) } });
  const price = PRICED.map(() => 1);
  for (let t = T0; t < T0 + DAYS * DAY; t += MIN) {
    const minute = (t - T0) / MIN;
    if (minute % 10 === 0) {
      PRICED.forEach((tokenId, k) => {
        price[k] *= Math.exp((random() - 0.5) * 0.2);
        const liquidityUsd = tokenId === RUGGED && t >= T0 + 3 * DAY ? 1_000 : 50_000;
        events.push({ at: t, tick: tick(tokenId, t, price[k], { liquidityUsd }) });
      });
    }
    PROLIFIC.forEach((authorId, k) => {
      if (minute % 20 === k * 5) say(t, authorId, random() < 0.5 ? pick(PRICED) : pick(UNPRICED));
    });
    if (random() < 0.5) {
      const tokenId = random() < 0.7 ? pick(PRICED) : pick(UNPRICED);
      say(t, pick(AUTHORS), tokenId, random() < 0.05 ? t - 3 * MIN : t);
    }
    if (minute % (8 * 60) === 0) {
      const tokenId = pick(PRICED);
      for (let i = 0; i < 2; i++) say(t + 10 * MIN + i * MIN, pick(AUTHORS), tokenId);
      const crowd = new Set<string>();
      while (crowd.size < 12) crowd.add(pick(AUTHORS));
      [...crowd].forEach((authorId, i) => say(t + 3 * HOUR + i * 2 * MIN, authorId, tokenId));
    }
  }
  return events.map((e, i) => ({ e, i })).sort((a, b) => a.e.at - b.e.at || a.i - b.i).map(({ e }) => e);
}

/**
 * What the module's state lives beside, as the engine drives it: the outcomes module (in
 * Maps, for both runs) resolving the calls, and the latest prices. Records what the module
 * emits and what its lookups answer: after each mention, and the whole directory hourly.
 */
class World {
  readonly outcomes = createOutcomesState();
  readonly prices = new Map<string, number>();
  readonly out = recordingEmitter();
  readonly answers: unknown[] = [];
  private readonly priceLookup: PriceLookup = { lastPrice: (id) => this.prices.get(id) ?? null };
  private hour = -1;

  run(state: AuthorsState, events: Event[]): void {
    for (const e of events) {
      for (const resolution of advanceOutcomes(this.outcomes, e.at)) onOutcome(state, resolution);
      advanceTo(state, e.at, this.out);
      if (Math.floor(e.at / HOUR) !== this.hour) {
        this.hour = Math.floor(e.at / HOUR);
        this.answers.push(structuredClone([...authorDirectory(state).all()]));
      }
      if ('tick' in e) {
        this.prices.set(e.tick.tokenId, e.tick.priceUsd);
        outcomesOnTick(this.outcomes, e.tick);
        continue;
      }
      const m = e.mention;
      const subject = onMention(state, m, this.out, tokens, this.priceLookup);
      if (subject) trackSubject(this.outcomes, subject);
      const directory = authorDirectory(state);
      this.answers.push(
        structuredClone([crowdLookup(state).uniqueAuthors1h(m.tokenId), authorQuality(state).researchScore(m.authorId), directory.byHandle(m.authorHandle), directory.get('au_010')]),
      );
    }
  }
}

describe('the authors module over a task store', () => {
  let dir: string;
  const events = input();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-authors-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('emits and answers what the state in Maps does, with the store committed and reopened at every 5,000 events', async () => {
    const inMaps = new World();
    inMaps.run(createAuthorsState(), events);

    const file = join(dir, 'authors.lmdb');
    const fromStore = new World();
    for (let from = 0; from < events.length; from += 5_000) {
      // A small cache: values are read back from the file all along, not only after a reopen.
      const { store } = await TaskStateStore.open(file, 1, 64);
      const chunk = events.slice(from, from + 5_000);
      fromStore.run(createAuthorsState(store), chunk);
      store.commit({ positions: { 'in#0': from + chunk.length }, maxEventTime: chunk.at(-1)!.at });
      await store.close();
    }

    const metrics = inMaps.out.values<AuthorMetrics>(AUTHOR_METRICS_TOPIC);
    expect(events.length).toBeGreaterThan(9 * 5_000);
    expect(inMaps.out.values(CALLS_TOPIC).length).toBeGreaterThan(6_000);
    expect(metrics.length).toBeGreaterThan(5_000);
    // Lead times from the crowds, scores, and authors whose calls fill three blocks.
    expect(metrics.filter((m) => m.leadTimeSamples > 0).length).toBeGreaterThan(1_000);
    expect(metrics.filter((m) => m.researchScore !== null).length).toBeGreaterThan(1_000);
    expect(Math.max(...metrics.map((m) => m.callsTotal))).toBeGreaterThan(128);
    expect(metrics.some((m) => m.callsUnpriced > 0)).toBe(true);
    expect(inMaps.answers.some((a) => Array.isArray(a) && a[0] === 12)).toBe(true);
    expect(fromStore.out.outputs).toEqual(inMaps.out.outputs);
    expect(fromStore.answers).toEqual(inMaps.answers);
  });

  it('commits only the keys one mention changed, and forgets past crowd waits and idle windows', async () => {
    const { store } = await TaskStateStore.open(join(dir, 'authors.lmdb'), 1);
    const state = createAuthorsState(store);
    const world = new World();
    world.run(state, events);
    const whole = store.commit({ positions: {}, maxEventTime: events.at(-1)!.at }).keysWritten;
    const end = events.at(-1)!.at;

    // The sweeps kept only the calls of the last 7 days waiting and the windows of the last hours.
    const waits = [...store.table<{ ts: number }[]>('authors-awaiting-crowd').entries()].flatMap(([, refs]) => refs);
    expect(waits.length).toBeGreaterThan(0);
    expect(Math.min(...waits.map((ref) => ref.ts))).toBeGreaterThanOrEqual(end - 7 * DAY - HOUR);
    const windows = [...store.table<{ times: number[] }>('authors-crowds').entries()].map(([, window]) => window);
    expect(windows.length).toBeGreaterThan(0);
    expect(windows.length).toBeLessThan(PRICED.length + UNPRICED.length);
    expect(Math.min(...windows.map((w) => w.times.at(-1)!))).toBeGreaterThan(end - 2 * HOUR);
    // au_000's calls fill three blocks; the author ids, two.
    expect(store.table('authors-calls').has('au_000\u00012')).toBe(true);
    expect(store.table('authors-ids').has('1')).toBe(true);

    // One mention at a time, without the outcomes that fall due meanwhile.
    const prices: PriceLookup = { lastPrice: (id) => (id === 'tk_new' ? 1 : null) };
    const mentionAt = (m: Mention) => {
      advanceTo(state, m.ts, world.out);
      onMention(state, m, world.out, tokens, prices);
      return store.commit({ positions: {}, maxEventTime: m.ts }).keysWritten;
    };
    // The last mention again, 30 s later in the same hour: not a call, and no crowd. The
    // scalars (a later time), the author's latest mention of the token, the token's window.
    const last = events.filter((e): e is Extract<Event, { mention: Mention }> => 'mention' in e).at(-1)!.mention;
    const again = { ...last, postId: 'po_again', ts: end + 30_000 };
    expect(mentionAt(again)).toBe(3);
    // A priced call by the same author, at the same time, on a token no one mentioned before:
    // the author's latest mention of it, its window and the list of windows, the author's
    // record (its call count) and last block of calls, the open call, the token's wait for a
    // crowd and the list of waiting tokens.
    expect(mentionAt({ ...again, postId: 'po_new', tokenId: 'tk_new', ref: 'tk_new' })).toBe(8);
    expect(whole).toBeGreaterThan(1_000);
    await store.close();
  });
});
