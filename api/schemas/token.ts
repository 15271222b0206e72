import { z } from 'zod';
import { CHAINS, slug } from '../../schemas/records/primitives.ts';
import { named, resourceHeader } from './common.ts';

const TokenNarrativeSchema = named(
  'TokenNarrative',
  z.strictObject({
    slug: slug.describe('The narrative (topic group) the token belongs to, e.g. `ai-agents`; its page is GET /v1/quant/narratives/{slug}.'),
  }),
  'The narrative of a token. Narratives are identified by their slug; no separate display name exists.',
);

/** The token object (spec 2.3), embedded wherever a response names a token. */
export const TokenSchema = named(
  'Token',
  z.strictObject({
    ...resourceHeader('token'),
    id: z.string().regex(/^tk_[A-Za-z0-9]+$/).describe('Token id, `tk_<id>`.'),
    symbol: z.string(),
    name: z.string(),
    chain: z.enum(CHAINS),
    address: z.string().describe('Contract address on `chain`.'),
    logoUrl: z.string().nullable().describe('Null when the token metadata has no logo.'),
    status: z.string().describe('Listing status from the token metadata, e.g. `active`.'),
    narrative: TokenNarrativeSchema,
    sourceUrl: z.string().nullable().describe('Where the token metadata came from; null when the source gave none.'),
  }),
  'A token: its identity and metadata as of the latest metadata event.',
);
export type Token = z.input<typeof TokenSchema>;
