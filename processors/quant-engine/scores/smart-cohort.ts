import type { Mention } from '../contracts.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../../runtime/state/tables.ts';

/**
 * Mentions by members of the auto cohort cohort_top-research, per token, for the
 * smart_cohort score. Membership is decided by the engine as of each mention (the cohorts
 * module's state at that event time), so a later change of membership never rewrites
 * what was counted.
 */

const DAY_MS = 24 * 3_600_000;

export interface SmartCohortState {
  /** Token id → members' mentions in arrival order; pruned when the first is a day older than a new one. */
  tokens: KeyedTable<{ ts: number; authorId: string }[]>;
}

export function createSmartCohortState(tables: TableSource = IN_MEMORY_TABLES): SmartCohortState {
  return { tokens: tables.table('smart-cohort-mentions') };
}

/** Records a mention when its author is a member now; call for every mention, in log order. */
export function smartMoneyOnMention(state: SmartCohortState, mention: Mention, isMember: boolean): void {
  if (!isMember) return;
  const entries = state.tokens.get(mention.tokenId) ?? [];
  entries.push({ ts: mention.ts, authorId: mention.authorId });
  // Snapshots read at times at or after the newest event (a late one is older still), so
  // entries a day older than this mention can never be inside a future window.
  const horizon = mention.ts - DAY_MS;
  state.tokens.set(mention.tokenId, entries[0].ts <= horizon ? entries.filter((e) => e.ts > horizon) : entries);
}

export interface SmartCohortActivity {
  /** Members' mentions of the token in (at − 24h, at]. */
  mentions24h: number;
  /** Distinct members among them. */
  members24h: number;
  /** Members of the cohort now. */
  cohortSize: number;
}

export interface SmartCohortLookup {
  activity(tokenId: string, at: number): SmartCohortActivity;
}

/** A read view over the state; `cohortSize` reads the cohorts module's current size of the cohort. */
export function smartCohortLookup(state: SmartCohortState, cohortSize: () => number): SmartCohortLookup {
  return {
    activity(tokenId, at) {
      let mentions = 0;
      const members = new Set<string>();
      for (const e of state.tokens.get(tokenId) ?? []) {
        if (e.ts <= at - DAY_MS || e.ts > at) continue;
        mentions++;
        members.add(e.authorId);
      }
      return { mentions24h: mentions, members24h: members.size, cohortSize: cohortSize() };
    },
  };
}
