import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMentionsState, mentionsFromPost, MENTIONS_TOPIC, UNRESOLVED_REFS_TOPIC } from '../../processors/quant-engine/mentions/mentions.ts';
import { evmAddress, HOUR, MIN, post, recordingEmitter, seededRandom, T0, tokenMeta } from '../../processors/quant-engine/tokens/fixtures.ts';
import { activity24h, applyTokenMeta, createTokensState, tokenLookup, type TokensState } from '../../processors/quant-engine/tokens/registry.ts';
import { TaskStateStore } from '../../processors/runtime/state/task-store.ts';
import type { OutputRecord } from '../../processors/runtime/processor.ts';
import type { Mention, Post, TokenMeta } from '../../schemas/records.ts';

/**
 * The token registry over a task's store on disk (processors/runtime/state): given the same
 * metadata and posts, the mentions resolved (the registry's hot path, through the mentions
 * module), the listing and the activity it serves equal those of its state held in Maps,
 * however often the store commits and is reopened; a commit after a post or a listing writes
 * a few keys, not the registry.
 */

const DAY = 24 * HOUR;
const DAYS = 3;
/** More tokens than a block of the listing holds (256). */
const TOKENS = 300;
/** Tokens sharing symbols, so that references resolve by activity. */
const SHARED = ['COPY', 'TWIN'];

type Step = { meta: TokenMeta } | { post: Post } | { listing: number };

const symbolOf = (n: number) => (n < 6 ? SHARED[n % 2] : `SYM${n}`);

/**
 * 250 tokens listed at the start and 50 over the days; one EVM address deployed on two chains;
 * a symbol changed and a stale record; a post a minute naming 1 to 3 references (symbols in any
 * case, ids, addresses with and without chain, unknown ones), some posts late, a campaign for
 * one of the tokens sharing a symbol; and the listing
 * read every hour, as the feature snapshots read it.
 */
function input(): Step[] {
  const random = seededRandom(5);
  const steps: Step[] = [];
  const meta = (n: number, ts: number, over: Partial<TokenMeta> = {}) =>
    steps.push({ meta: tokenMeta(`tk_${n}`, symbolOf(n), ts, { address: evmAddress(n + 1), ...over }) });
  for (let n = 0; n < 250; n++) meta(n, T0);
  meta(250, T0, { chain: 'eth', address: evmAddress(1) }); // tk_0's address, on another chain
  let listed = 251;
  let postNo = 0;
  for (let t = T0 + MIN; t < T0 + DAYS * DAY; t += MIN) {
    if (listed < TOKENS && random() < 0.012) meta(listed++, t);
    if (t === T0 + DAY) meta(7, t, { symbol: 'RENAMED' });
    if (t === T0 + DAY + HOUR) meta(7, t - 2 * DAY); // stale: only its listing time counts
    if ((t - T0) % HOUR === 0) steps.push({ listing: t });
    const refs = Array.from({ length: 1 + Math.floor(random() ** 2 * 3) }, () => {
      // Skewed towards the first tokens, so that the shared symbols' activity moves.
      const n = Math.floor(random() ** 3 * listed);
      const kind = random();
      if (kind < 0.5) return random() < 0.5 ? `$${symbolOf(n).toLowerCase()}` : symbolOf(n);
      if (kind < 0.65) return `tk_${n}`;
      if (kind < 0.8) return evmAddress(n + 1).toUpperCase().replace('0X', '0x');
      if (kind < 0.9) return `${random() < 0.8 ? 'base' : 'eth'}:${evmAddress(n + 1)}`;
      return random() < 0.5 ? '$NOPE' : 'not a ref!';
    });
    // On day 2 a campaign names tk_4 by id in every post, until it leads its symbol.
    if (t >= T0 + DAY && t < T0 + 2 * DAY) refs.push('tk_4');
    const ts = random() < 0.03 ? t - Math.floor(random() * 30 * HOUR) : t;
    steps.push({ post: post(`po_${++postNo}`, `au_${postNo % 40}`, ts, refs) });
  }
  return steps;
}

/** The outputs: the mentions and unresolved references, and at each hour the listing and the tokens' activity. */
function run(tokens: TokensState, steps: Step[], out: unknown[]): void {
  const emitter = recordingEmitter();
  const mentions = createMentionsState();
  const lookup = tokenLookup(tokens);
  for (const step of steps) {
    if ('meta' in step) out.push(applyTokenMeta(tokens, step.meta));
    else if ('post' in step) mentionsFromPost(mentions, tokens, step.post, emitter);
    else {
      // Asked about 6 hours ago right after now, a token answers as of now (as a late post's
      // resolution does): asking moved its ring forward for good.
      const activity = (tokenId: string) => [activity24h(tokens, tokenId, step.listing), activity24h(tokens, tokenId, step.listing - 6 * HOUR)];
      out.push([...lookup.all()].map((info) => [info.tokenId, info.symbol, info.listedAt, ...activity(info.tokenId)]));
    }
    out.push(...emitter.outputs.splice(0));
  }
}

const ofTopic = (out: unknown[], topic: string) => out.filter((o) => (o as OutputRecord).topic === topic);

describe('the token registry over a task store', () => {
  let dir: string;
  const steps = input();
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-tokens-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('resolves, lists and counts what the state in Maps does, with the store committed and reopened at every 500 steps', async () => {
    const inMaps: unknown[] = [];
    run(createTokensState(), steps, inMaps);

    const file = join(dir, 'tokens.lmdb');
    const fromStore: unknown[] = [];
    const every = 500;
    for (let from = 0; from < steps.length; from += every) {
      // No cache: every value is read back from the file, so a change not set again is lost.
      const { store } = await TaskStateStore.open(file, 1, 0);
      run(createTokensState(store), steps.slice(from, from + every), fromStore);
      store.commit({ positions: { 'in#0': from + every }, maxEventTime: 0 });
      await store.close();
    }

    expect(steps.length).toBeGreaterThan(5 * every);
    expect(ofTopic(inMaps, MENTIONS_TOPIC).length).toBeGreaterThan(DAYS * 24 * 60);
    expect(ofTopic(inMaps, UNRESOLVED_REFS_TOPIC).length).toBeGreaterThan(DAYS * 24 * 2);
    // A shared symbol resolves to more than one of its tokens as their activity changes.
    const mentioned = ofTopic(inMaps, MENTIONS_TOPIC).map((o) => (o as OutputRecord).value as Mention);
    const copies = new Set(mentioned.filter((m) => m.refKind === 'symbol' && m.ref.replace('$', '').toUpperCase() === 'COPY').map((m) => m.tokenId));
    expect(copies.size).toBeGreaterThan(1);
    const lastListing = inMaps.filter((o) => Array.isArray(o)).at(-1) as [string][];
    expect(lastListing.map(([tokenId]) => tokenId)).toEqual(Array.from({ length: TOKENS }, (_, n) => `tk_${n}`));
    expect(fromStore).toEqual(inMaps);
  });

  it('commits the keys a post or a listing changed', async () => {
    const { store } = await TaskStateStore.open(join(dir, 'tokens.lmdb'), 1);
    const tokens = createTokensState(store);
    run(tokens, steps, []);
    store.commit({ positions: {}, maxEventTime: 0 });
    const now = T0 + DAYS * DAY;

    // A post naming a token of its own symbol: that token's activity.
    run(tokens, [{ post: post('po_next', 'au_1', now, ['$SYM42']) }], []);
    expect(store.commit({ positions: {}, maxEventTime: 0 }).keysWritten).toBe(1);
    // A token listed: the token, the last block of the listing, the count, its symbol and its address.
    run(tokens, [{ meta: tokenMeta('tk_new', 'NEW', now, { address: evmAddress(999) }) }], []);
    expect(store.commit({ positions: {}, maxEventTime: 0 }).keysWritten).toBe(5);
    // Renamed: the token, its old symbol and its new one, its address (indexed anew).
    run(tokens, [{ meta: tokenMeta('tk_new', 'NEWER', now + 1, { address: evmAddress(999) }) }], []);
    expect(store.commit({ positions: {}, maxEventTime: 0 }).keysWritten).toBe(4);
    await store.close();
  });
});
