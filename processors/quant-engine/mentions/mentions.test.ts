import { describe, expect, it } from 'vitest';
import { MentionSchema } from '../../../schemas/records.ts';
import { UnresolvedRefSchema, type UnresolvedRef } from '../../../schemas/records/quant-market.ts';
import { avroRoundTrip, evmAddress, post, recordingEmitter, T0, tokenMeta } from '../tokens/fixtures.ts';
import { applyTokenMeta, createTokensState, type TokensState } from '../tokens/registry.ts';
import { createMentionsState, mentionCounts, mentionsFromPost, MENTIONS_TOPIC, UNRESOLVED_REFS_TOPIC } from './mentions.ts';

function registry(): TokensState {
  const tokens = createTokensState();
  applyTokenMeta(tokens, tokenMeta('tk_a', 'COPY', T0, { address: evmAddress(0xa) }));
  applyTokenMeta(tokens, tokenMeta('tk_b', 'COPY', T0 + 1, { address: evmAddress(0xb) }));
  applyTokenMeta(tokens, tokenMeta('tk_c', 'SOLO', T0 + 2, { address: evmAddress(0xc) }));
  return tokens;
}

describe('mentionsFromPost', () => {
  it('emits one mention per distinct resolved token, keyed by token id at the post time', () => {
    const tokens = registry();
    const state = createMentionsState();
    const emitter = recordingEmitter();
    const p = post('po_1', 'au_1', T0 + 1000, ['$solo', 'tk_c', `base:${evmAddress(0xc)}`, '$COPY'], {
      likes: 7,
      replies: 3,
      reposts: 2,
      kind: 'quote',
    });
    const mentions = mentionsFromPost(state, tokens, p, emitter);
    expect(mentions).toEqual([
      {
        mentionId: emitter.id('mn', 'po_1', 'tk_c'),
        postId: 'po_1',
        authorId: 'au_1',
        authorHandle: 'au_1',
        tokenId: 'tk_c',
        ref: '$solo',
        refKind: 'symbol',
        postKind: 'quote',
        engagement: 12,
        ts: T0 + 1000,
      },
      expect.objectContaining({ tokenId: 'tk_a', ref: '$COPY', refKind: 'symbol' }),
    ]);
    expect(emitter.outputs.map((o) => [o.topic, o.key, o.timestamp])).toEqual([
      [MENTIONS_TOPIC, 'tk_c', T0 + 1000],
      [MENTIONS_TOPIC, 'tk_a', T0 + 1000],
    ]);
    expect(mentionCounts(state).mentions).toBe(2);
    for (const m of mentions) expect(MentionSchema.parse(avroRoundTrip('mention', m))).toEqual(m);
  });

  it('counts unresolvable references as UnresolvedRef records instead of guessing', () => {
    const tokens = registry();
    const state = createMentionsState();
    const emitter = recordingEmitter();
    const refs = ['$NOPE', 'tk_zzz', `eth:${evmAddress(0xc)}`, evmAddress(0xd), 'not a ref!', '$NOPE'];
    expect(mentionsFromPost(state, tokens, post('po_2', 'au_1', T0 + 5, refs), emitter)).toEqual([]);
    const unresolved = emitter.values<UnresolvedRef>(UNRESOLVED_REFS_TOPIC);
    expect(unresolved).toEqual([
      { postId: 'po_2', ref: '$NOPE', reason: 'unknown_symbol', ts: T0 + 5 },
      { postId: 'po_2', ref: 'tk_zzz', reason: 'unknown_id', ts: T0 + 5 },
      { postId: 'po_2', ref: `eth:${evmAddress(0xc)}`, reason: 'unknown_address', ts: T0 + 5 },
      { postId: 'po_2', ref: evmAddress(0xd), reason: 'unknown_address', ts: T0 + 5 },
      { postId: 'po_2', ref: 'not a ref!', reason: 'invalid', ts: T0 + 5 },
    ]);
    expect(emitter.outputs.every((o) => o.key === 'po_2' && o.timestamp === T0 + 5)).toBe(true);
    expect(mentionCounts(state).unresolved).toEqual({ invalid: 1, unknown_symbol: 1, unknown_id: 1, unknown_address: 2 });
    for (const u of unresolved) expect(UnresolvedRefSchema.parse(avroRoundTrip('unresolved-ref', u))).toEqual(u);
  });

  it('does not resolve a token the registry has not listed yet at the post time', () => {
    const tokens = createTokensState();
    const state = createMentionsState();
    const emitter = recordingEmitter();
    mentionsFromPost(state, tokens, post('po_1', 'au_1', T0, ['$NEW']), emitter);
    applyTokenMeta(tokens, tokenMeta('tk_n', 'NEW', T0 + 1));
    const later = mentionsFromPost(state, tokens, post('po_2', 'au_1', T0 + 2, ['$NEW']), emitter);
    expect(mentionCounts(state).unresolved.unknown_symbol).toBe(1);
    expect(later.map((m) => m.tokenId)).toEqual(['tk_n']);
  });

  it('resolves a shared symbol by activity before the post, whatever else the post mentions', () => {
    const tokens = registry();
    const state = createMentionsState();
    const emitter = recordingEmitter();
    // The post's own mention of tk_b does not count for its $COPY: tk_a (earlier listed) wins the tie.
    const first = mentionsFromPost(state, tokens, post('po_1', 'au_1', T0 + 10, ['$COPY', 'tk_b']), emitter);
    expect(first.map((m) => m.tokenId)).toEqual(['tk_a', 'tk_b']);
    mentionsFromPost(state, tokens, post('po_2', 'au_2', T0 + 20, ['tk_b']), emitter);
    // Now tk_b has 2 mentions in 24h against tk_a's 1.
    const second = mentionsFromPost(state, tokens, post('po_3', 'au_3', T0 + 30, ['copy']), emitter);
    expect(second.map((m) => [m.tokenId, m.refKind])).toEqual([['tk_b', 'symbol']]);
  });
});
