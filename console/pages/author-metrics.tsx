import type { Schemas } from '../api.ts';
import { interval, orMissing, percent, score } from '../format.tsx';

/** How an author's track record reads, on the authors' leaderboard and on an author's page. */

export type AuthorMetrics = Schemas['AuthorMetrics'];

/** Why each figure can be null, as the API documents it. */
export const WHY_NULL = {
  noResolvedCall: 'no resolved call',
  leadTime: 'no call drew a crowd',
  drawdown: 'no drawdown',
  consistency: 'fewer than 3 active weeks',
  volatility: 'fewer than two returns',
  researchScore: 'fewer than 3 resolved calls',
} as const;

export function HitRate({ m }: { m: AuthorMetrics }) {
  return <>{orMissing(m.hit_rate, (r) => percent(r.value), WHY_NULL.noResolvedCall)}</>;
}

/** The 95% Wilson score interval of the hit rate, as the API computed it. */
export function WilsonInterval({ m }: { m: AuthorMetrics }) {
  return <>{orMissing(m.hit_rate, interval, WHY_NULL.noResolvedCall)}</>;
}

export function ResearchScore({ m }: { m: AuthorMetrics }) {
  return <>{orMissing(m.research_score, score, WHY_NULL.researchScore)}</>;
}

/** The confidence, with why it is below HIGH. */
export function Confidence({ m }: { m: AuthorMetrics }) {
  return (
    <>
      {m.confidence}
      {m.confidence_reason !== null && <small> ({m.confidence_reason})</small>}
    </>
  );
}
