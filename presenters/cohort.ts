import type { TokenRow } from './tokens-table.ts';
import type { ConvergenceEvent } from '../schemas/records/quant-social.ts';
import { iso } from './resource.ts';
import { presentTokenOf } from './token.ts';

/** A cohort's convergence event as projections/read-models/cohorts.ts reads it; declared here, where presenters may import it. */
export interface ConvergenceEventView {
  eventId: string;
  tokenId: string;
  ts: number;
  cohortVersion: number;
  memberCount: number;
  cohortSize: number;
  windowMinutes: number;
  members: string[];
  score: number;
}

/** A cohort's convergence on a token, as the cohort page lists it (api/schemas/social.ts ConvergenceEvent). */
export function presentConvergence(e: ConvergenceEventView, tokens: ReadonlyMap<string, TokenRow>) {
  return {
    id: e.eventId,
    at: iso(e.ts),
    token: presentTokenOf(tokens, e.tokenId),
    cohortVersion: e.cohortVersion,
    memberCount: e.memberCount,
    cohortSize: e.cohortSize,
    windowMinutes: e.windowMinutes,
    members: e.members,
    score: e.score,
  };
}

/** A convergence event on its own (the `cohort.convergence` public event): the same item, naming its cohort. */
export function presentCohortConvergence(e: ConvergenceEvent, tokens: ReadonlyMap<string, TokenRow>) {
  return { cohort: { id: e.cohortId, kind: e.cohortKind, name: e.cohortName }, ...presentConvergence(e, tokens) };
}
