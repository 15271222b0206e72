import { z } from 'zod';

/**
 * The record types of the log, their TypeScript shapes and the zod validators applied
 * wherever untrusted data enters (file import, processor inputs). Avro (schemas/avro)
 * guarantees the structure; these add the semantic rules Avro cannot express.
 */

export const CHAINS = ['solana', 'robinhood', 'base', 'bnb', 'eth', 'arc'] as const;
export type Chain = (typeof CHAINS)[number];

export const POST_KINDS = ['post', 'reply', 'repost', 'quote'] as const;

/** Event times before 2009 or after 2100 are taken as unit mistakes (seconds vs ms). */
const eventTime = z.number().int().min(1_230_768_000_000).max(4_102_444_800_000);
const count = z.number().int().min(0);
const usd = z.number().finite().min(0);
const slug = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a lower-case slug like ai-agents');

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
  tokenId: z.string().regex(/^tk_[A-Za-z0-9]+$/, 'must be tk_<id>'),
  ts: eventTime,
  priceUsd: usd,
  volumeUsd: usd,
  liquidityUsd: usd,
  marketCapUsd: usd,
  trades: count,
});
export type MarketTick = z.infer<typeof MarketTickSchema>;

export const TokenMetaSchema = z.strictObject({
  tokenId: z.string().regex(/^tk_[A-Za-z0-9]+$/, 'must be tk_<id>'),
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
  tokenId: z.string().regex(/^tk_[A-Za-z0-9]+$/),
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

/** Each record type: its Avro schema folder under schemas/avro and its validator. */
export const RECORD_TYPES = {
  post: PostSchema,
  'market-tick': MarketTickSchema,
  'token-meta': TokenMetaSchema,
  mention: MentionSchema,
  'dead-letter': DeadLetterSchema,
} as const;

export type RecordTypeName = keyof typeof RECORD_TYPES;
export type RecordOf<T extends RecordTypeName> = z.infer<(typeof RECORD_TYPES)[T]>;
