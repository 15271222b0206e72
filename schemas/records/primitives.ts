import { z } from 'zod';

/** Field rules shared by the record validators. */

export const CHAINS = ['solana', 'robinhood', 'base', 'bnb', 'eth', 'arc'] as const;
export type Chain = (typeof CHAINS)[number];

export const POST_KINDS = ['post', 'reply', 'repost', 'quote'] as const;

/** Event times before 2009 or after 2100 are taken as unit mistakes (seconds vs ms). */
export const eventTime = z.number().int().min(1_230_768_000_000).max(4_102_444_800_000);
export const count = z.number().int().min(0);
export const usd = z.number().finite().min(0);
export const fraction = z.number().min(0).max(1);
export const slug = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a lower-case slug like ai-agents');
export const tokenId = z.string().regex(/^tk_[A-Za-z0-9]+$/, 'must be tk_<id>');
