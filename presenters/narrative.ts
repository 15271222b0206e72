import type { NarrativeSummary } from '../projections/read-models/narratives.ts';
import { header, iso } from './resource.ts';

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
