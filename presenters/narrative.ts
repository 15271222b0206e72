import type { z } from 'zod';
import type { NarrativeContributorSchema, NarrativeTokenCountSchema } from '../schemas/records/quant-social.ts';
import { header, iso } from './resource.ts';

/** A narrative's latest hourly bucket, as projections/read-models/narratives.ts reads it; declared here, where presenters may import it. */
export interface NarrativeSummary {
  narrative: string;
  /** Start of the latest hourly bucket the values come from. */
  bucketStart: number;
  attentionShare: number | null;
  attentionShare24h: number | null;
  attentionShareChange24h: number | null;
  theses: number;
  mentions: number;
  uniqueAuthors: number;
  newAuthors: number;
  authorGrowth: number | null;
  topTokens: z.infer<typeof NarrativeTokenCountSchema>[];
  topContributors: z.infer<typeof NarrativeContributorSchema>[];
}

/** The narrative object (api/schemas/social.ts Narrative) from its latest hourly bucket. */
export function presentNarrative(n: NarrativeSummary) {
  return {
    ...header('narrative'),
    slug: n.narrative,
    bucketStart: iso(n.bucketStart),
    attentionShare: n.attentionShare,
    attentionShare24h: n.attentionShare24h,
    attentionShareChange24h: n.attentionShareChange24h,
    theses: n.theses,
    mentions: n.mentions,
    uniqueAuthors: n.uniqueAuthors,
    newAuthors: n.newAuthors,
    authorGrowth: n.authorGrowth,
    topTokens: n.topTokens,
    topContributors: n.topContributors,
  };
}
