import { describe, expect, it } from 'vitest';
import { NarrativeBucketSchema, type NarrativeBucket } from '../../../schemas/records/quant-social.ts';
import { checkpointed, expectConforms, mention, recordingEmitter, tokenLookup } from '../authors/test-support.ts';
import { advanceTo, createNarrativesState, lateMentions, NARRATIVES_TOPIC, narrativeShares, onMention, type NarrativesState } from './narratives.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;
const T0 = Date.UTC(2024, 0, 1);

const tokens = tokenLookup({
  tk_a1: { narrative: 'ai-agents', symbol: 'AONE' },
  tk_a2: { narrative: 'ai-agents' },
  tk_a3: { narrative: 'ai-agents' },
  tk_a4: { narrative: 'ai-agents' },
  tk_a5: { narrative: 'ai-agents' },
  tk_a6: { narrative: 'ai-agents' },
  tk_m1: { narrative: 'memes' },
  tk_d1: { narrative: 'defi' },
});

class Harness {
  state: NarrativesState = createNarrativesState();
  readonly out = recordingEmitter();
  mention(authorId: string, tokenId: string, ts: number, postId?: string): void {
    this.advance(ts);
    onMention(this.state, mention(authorId, tokenId, ts, postId), tokens);
  }
  advance(t: number): void {
    advanceTo(this.state, t, this.out, tokens);
  }
  buckets(narrative?: string, start?: number): NarrativeBucket[] {
    return this.out
      .values<NarrativeBucket>(NARRATIVES_TOPIC)
      .filter((b) => (narrative === undefined || b.narrative === narrative) && (start === undefined || b.bucketStart === start));
  }
}

describe('narrative buckets', () => {
  it('count theses, mentions, authors, top tokens and contributors of an hour', () => {
    const h = new Harness();
    h.mention('au_1', 'tk_a1', T0 + MIN, 'p1');
    h.mention('au_1', 'tk_a2', T0 + MIN, 'p1'); // one post, two tokens: one thesis
    h.mention('au_1', 'tk_a1', T0 + 2 * MIN, 'p2');
    h.mention('au_2', 'tk_a1', T0 + 3 * MIN, 'p3');
    h.mention('au_3', 'tk_m1', T0 + 4 * MIN, 'p4');
    for (const [i, t] of ['tk_a3', 'tk_a4', 'tk_a5', 'tk_a6', 'tk_a6'].entries()) h.mention(`au_x${i}`, t, T0 + (10 + i) * MIN);
    expect(h.buckets()).toEqual([]);
    h.advance(T0 + HOUR);

    const [ai] = h.buckets('ai-agents');
    expect(ai).toMatchObject({
      narrative: 'ai-agents',
      bucketStart: T0,
      ts: T0 + HOUR,
      theses: 8,
      mentions: 9,
      totalMentions: 10,
      uniqueAuthors: 7,
      newAuthors: 7,
      authorIds: ['au_1', 'au_2', 'au_x0', 'au_x1', 'au_x2', 'au_x3', 'au_x4'],
      authorGrowth: null,
      attentionShare: 0.9,
      attentionShare24h: 0.9,
      attentionShareChange24h: null,
      topTokens: [
        { tokenId: 'tk_a1', symbol: 'AONE', mentions: 3 },
        { tokenId: 'tk_a6', symbol: 'A6', mentions: 2 },
        { tokenId: 'tk_a2', symbol: 'A2', mentions: 1 },
        { tokenId: 'tk_a3', symbol: 'A3', mentions: 1 },
        { tokenId: 'tk_a4', symbol: 'A4', mentions: 1 },
      ],
    });
    expect(ai.topContributors).toEqual([
      { authorId: 'au_1', handle: 'h_au_1', posts: 2 },
      { authorId: 'au_2', handle: 'h_au_2', posts: 1 },
      { authorId: 'au_x0', handle: 'h_au_x0', posts: 1 },
      { authorId: 'au_x1', handle: 'h_au_x1', posts: 1 },
      { authorId: 'au_x2', handle: 'h_au_x2', posts: 1 },
    ]);
    expectConforms('narrative-bucket', NarrativeBucketSchema, ai);
    expect(h.out.outputs.find((o) => o.topic === NARRATIVES_TOPIC)).toMatchObject({ key: 'ai-agents', timestamp: T0 + HOUR });
  });

  it('emit a real zero for a narrative without posts in an hour, and for a silent hour', () => {
    const h = new Harness();
    h.mention('au_1', 'tk_a1', T0 + MIN);
    h.mention('au_2', 'tk_m1', T0 + HOUR + MIN);
    h.advance(T0 + 3 * HOUR);
    const ai = h.buckets('ai-agents');
    expect(ai.map((b) => [b.bucketStart, b.theses, b.mentions, b.uniqueAuthors, b.attentionShare])).toEqual([
      [T0, 1, 1, 1, 1],
      [T0 + HOUR, 0, 0, 0, 0],
      [T0 + 2 * HOUR, 0, 0, 0, null], // nobody mentioned anything: no share to take
    ]);
    expect(ai[1]).toMatchObject({ topTokens: [], topContributors: [], authorIds: [], newAuthors: 0 });
    // memes starts in its first active hour, not before.
    expect(h.buckets('memes').map((b) => b.bucketStart)).toEqual([T0 + HOUR, T0 + 2 * HOUR]);
    for (const b of h.buckets()) expectConforms('narrative-bucket', NarrativeBucketSchema, b);
  });

  it('have attention shares summing to 1 over narratives in an hour with mentions', () => {
    const h = new Harness();
    const plan: [string, number][] = [
      ['tk_a1', 7],
      ['tk_m1', 3],
      ['tk_d1', 1],
    ];
    for (const [token, n] of plan) for (let i = 0; i < n; i++) h.mention(`au_${token}${i}`, token, T0 + i * MIN);
    h.mention('au_z', 'tk_m1', T0 + HOUR + MIN);
    h.advance(T0 + 2 * HOUR);
    for (const start of [T0, T0 + HOUR]) {
      const shares = h.buckets(undefined, start).map((b) => b.attentionShare!);
      expect(shares).toHaveLength(3);
      expect(shares.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 12);
    }
    expect(h.buckets(undefined, T0).map((b) => [b.narrative, b.attentionShare])).toEqual([
      ['ai-agents', 7 / 11],
      ['defi', 1 / 11],
      ['memes', 3 / 11],
    ]);
  });

  it('measure author growth against the previous 24 hours and count new authors once', () => {
    const h = new Harness();
    // Hour 0: 2 authors; hour 1: none; hour 2: 5 authors, two of them seen before.
    h.mention('au_1', 'tk_a1', T0);
    h.mention('au_2', 'tk_a1', T0 + MIN);
    for (const a of ['au_1', 'au_2', 'au_3', 'au_4', 'au_5']) h.mention(a, 'tk_a1', T0 + 2 * HOUR + MIN);
    h.advance(T0 + 3 * HOUR);
    const ai = h.buckets('ai-agents');
    expect(ai.map((b) => b.newAuthors)).toEqual([2, 0, 3]);
    expect(ai[0].authorGrowth).toBeNull();
    expect(ai[1].authorGrowth).toBeCloseTo((0 + 1) / (2 + 1) - 1, 12);
    expect(ai[2].authorGrowth).toBeCloseTo((5 + 1) / (1 + 1) - 1, 12);

    // The baseline is the last 24 hours only: 30 quiet hours later it is all zeros.
    for (let k = 0; k < 30; k++) h.advance(T0 + (4 + k) * HOUR);
    h.mention('au_1', 'tk_a1', T0 + 34 * HOUR);
    h.advance(T0 + 35 * HOUR);
    expect(h.buckets('ai-agents').at(-1)!.authorGrowth).toBe(1);
  });

  it('compare the last 24 hours of attention share with the 24 before, once 48 hours are known', () => {
    const h = new Harness();
    // 24h with ai at 1 of 4 mentions per hour, then 24h at 3 of 4.
    for (let k = 0; k < 48; k++) {
      const ai = k < 24 ? 1 : 3;
      for (let i = 0; i < 4; i++) h.mention(`au_${i}`, i < ai ? 'tk_a1' : 'tk_m1', T0 + k * HOUR + i * MIN);
    }
    h.advance(T0 + 48 * HOUR);
    const ai = h.buckets('ai-agents');
    expect(ai).toHaveLength(48);
    expect(ai[46].attentionShareChange24h).toBeNull();
    expect(ai[47].attentionShare24h).toBe(0.75);
    expect(ai[47].attentionShareChange24h).toBe(0.5);
    // Hours 7 to 30: 17 at 1 of 4, 7 at 3 of 4.
    expect(ai[30].attentionShare24h).toBeCloseTo((17 * 1 + 7 * 3) / (24 * 4), 12);
  });

  it('serve the share of the last complete hour to the features module', () => {
    const h = new Harness();
    const shares = narrativeShares(h.state);
    h.mention('au_1', 'tk_a1', T0);
    expect(shares.attentionShare('ai-agents')).toBeNull();
    h.mention('au_2', 'tk_m1', T0 + MIN);
    h.mention('au_3', 'tk_m1', T0 + HOUR + MIN); // opens hour 1, closes hour 0
    expect(shares.attentionShare('ai-agents')).toBe(0.5);
    expect(shares.attentionShare('defi')).toBe(0);
    h.advance(T0 + 2 * HOUR);
    expect(shares.attentionShare('ai-agents')).toBe(0);
    expect(shares.attentionShare('memes')).toBe(1);
    h.advance(T0 + 3 * HOUR);
    expect(shares.attentionShare('memes')).toBeNull();
  });

  it('count a mention older than the open hour as late and leave closed hours as they were', () => {
    const h = new Harness();
    h.mention('au_1', 'tk_a1', T0 + 59 * MIN);
    h.mention('au_2', 'tk_a1', T0 + HOUR + MIN);
    h.mention('au_3', 'tk_a1', T0 + 58 * MIN); // after hour 0 closed
    h.mention('au_4', 'tk_a1', T0 + HOUR); // older than the newest event, still in the open hour
    h.advance(T0 + 2 * HOUR);
    expect(lateMentions(h.state)).toBe(1);
    expect(h.buckets('ai-agents').map((b) => b.authorIds)).toEqual([['au_1'], ['au_2', 'au_4']]);
  });

  it('survive a checkpoint round trip mid-stream with identical outputs', () => {
    const run = (restoreAt: number | null) => {
      const h = new Harness();
      for (let i = 0; i < 40; i++) {
        if (i === restoreAt) h.state = checkpointed(h.state);
        h.mention(`au_${i % 7}`, ['tk_a1', 'tk_m1', 'tk_d1', 'tk_a2'][i % 4], T0 + i * 17 * MIN, `p_${i >> 1}`);
      }
      h.advance(T0 + 14 * HOUR);
      return JSON.stringify(h.out.outputs);
    };
    const straight = run(null);
    expect(straight).toContain(NARRATIVES_TOPIC);
    expect(run(21)).toBe(straight);
  });
});
