import { z } from 'zod';
import { CHAINS, count, eventTime, POST_KINDS, slug, tokenId, usd } from './primitives.ts';

/**
 * The ingest record types (posts, market ticks, token metadata), the mention the quant
 * engine derives from posts, and the dead letter. Avro (schemas/avro) guarantees the
 * structure; these validators add the semantic rules Avro cannot express and run wherever
 * untrusted data enters (file import, processor inputs).
 */

export const PostSchema = z.strictObject({
  postId: z.string().min(1),
  authorId: z.string().min(1),
  authorHandle: z.string().regex(/^[A-Za-z0-9_]{1,50}$/, 'must be a handle without @'),
  authorFollowers: count.nullable(),
  ts: eventTime,
  kind: z.enum(POST_KINDS),
  tokenRefs: z.array(z.string().min(1).max(128)).max(50),
  likes: count,
  replies: count,
  reposts: count,
  views: count.nullable(),
  text: z.string().max(10_000).nullable(),
  narrativeHints: z.array(slug).max(20),
});
export type Post = z.infer<typeof PostSchema>;

export const MarketTickSchema = z.strictObject({
  tokenId,
  ts: eventTime,
  priceUsd: usd,
  volumeUsd: usd,
  liquidityUsd: usd,
  marketCapUsd: usd,
  trades: count,
});
export type MarketTick = z.infer<typeof MarketTickSchema>;

export const TokenMetaSchema = z.strictObject({
  tokenId,
  ts: eventTime,
  symbol: z.string().regex(/^[A-Za-z0-9]{1,20}$/, 'must be 1-20 letters or digits'),
  name: z.string().min(1).max(100),
  chain: z.enum(CHAINS),
  address: z.string().regex(/^[A-Za-z0-9]{20,64}$/, 'must be a contract address'),
  logoUrl: z.url().nullable(),
  status: z.string().min(1).max(32),
  narrative: slug,
  sourceUrl: z.url().nullable(),
});
export type TokenMeta = z.infer<typeof TokenMetaSchema>;

export const MentionSchema = z.strictObject({
  mentionId: z.string().regex(/^mn_[0-9a-f]+$/),
  postId: z.string().min(1),
  authorId: z.string().min(1),
  authorHandle: z.string().min(1),
  tokenId,
  ref: z.string().min(1),
  refKind: z.enum(['symbol', 'id', 'chain_address', 'address']),
  postKind: z.enum(POST_KINDS),
  engagement: count,
  ts: eventTime,
});
export type Mention = z.infer<typeof MentionSchema>;

export const DeadLetterSchema = z.strictObject({
  source: z.string(),
  partition: z.number().int().nullable(),
  offset: z.number().int().nullable(),
  line: z.number().int().nullable(),
  stage: z.string(),
  reason: z.string(),
  key: z.string().nullable(),
  payload: z.instanceof(Buffer).nullable(),
  ts: z.number().int(),
});
export type DeadLetter = z.infer<typeof DeadLetterSchema>;

