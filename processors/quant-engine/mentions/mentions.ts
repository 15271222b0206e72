import { TOPICS } from '../../../schemas/catalogue.ts';
import type { Mention, Post } from '../../../schemas/records.ts';
import { UNRESOLVED_REASONS, type UnresolvedReason, type UnresolvedRef } from '../../../schemas/records/quant-market.ts';
import type { Emitter } from '../contracts.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';
import { noteMention, resolveTokenRef, type TokensState } from '../tokens/registry.ts';

/**
 * Explodes a post into one Mention per distinct token it references, resolved against the
 * registry as of the post's time. References that match no token are emitted as
 * UnresolvedRef records and counted; they are never guessed.
 */

export const MENTIONS_TOPIC = TOPICS.mentions.name;
export const UNRESOLVED_REFS_TOPIC = TOPICS.unresolvedRefs.name;

export interface MentionCounts {
  mentions: number;
  unresolved: Record<UnresolvedReason, number>;
}

/** The counts under one key of a table. */
export interface MentionsState {
  counts: KeyedTable<MentionCounts>;
}

const COUNTS_KEY = 'counts';

export function createMentionsState(tables: TableSource = IN_MEMORY_TABLES): MentionsState {
  return { counts: tables.table('mentions-counts') };
}

/** Mentions emitted and references left unresolved, by reason, so far. */
export function mentionCounts(state: MentionsState): MentionCounts {
  return state.counts.get(COUNTS_KEY) ?? { mentions: 0, unresolved: Object.fromEntries(UNRESOLVED_REASONS.map((r) => [r, 0])) as Record<UnresolvedReason, number> };
}

/**
 * Resolves the post's references, emits its mentions (quant.mentions, keyed by token id) and
 * unresolved references (quant.unresolved-refs, keyed by post id), and counts each mention
 * towards the token's activity. Every reference is resolved before any activity is counted,
 * so the order of references within a post cannot change which token a shared symbol means.
 */
export function mentionsFromPost(state: MentionsState, tokens: TokensState, post: Post, emitter: Emitter): Mention[] {
  const counts = mentionCounts(state);
  const resolved = new Map<string, { ref: string; kind: Mention['refKind'] }>();
  for (const ref of new Set(post.tokenRefs)) {
    const r = resolveTokenRef(tokens, ref, post.ts);
    if (r.ok) {
      if (!resolved.has(r.tokenId)) resolved.set(r.tokenId, { ref, kind: r.kind });
      continue;
    }
    counts.unresolved[r.reason]++;
    const value: UnresolvedRef = { postId: post.postId, ref, reason: r.reason, ts: post.ts };
    emitter.emit({ topic: UNRESOLVED_REFS_TOPIC, key: post.postId, value, timestamp: post.ts });
  }
  const engagement = post.likes + post.replies + post.reposts;
  const mentions: Mention[] = [];
  for (const [tokenId, { ref, kind }] of resolved) {
    noteMention(tokens, tokenId, post.ts);
    const mention: Mention = {
      mentionId: emitter.id('mn', post.postId, tokenId),
      postId: post.postId,
      authorId: post.authorId,
      authorHandle: post.authorHandle,
      tokenId,
      ref,
      refKind: kind,
      postKind: post.kind,
      engagement,
      ts: post.ts,
    };
    emitter.emit({ topic: MENTIONS_TOPIC, key: tokenId, value: mention, timestamp: post.ts });
    mentions.push(mention);
  }
  counts.mentions += mentions.length;
  state.counts.set(COUNTS_KEY, counts);
  return mentions;
}
