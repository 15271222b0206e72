import type { PlanName } from '../schemas/records.ts';

/**
 * Plans as data (spec §8). The rate limit is per key over a 60 s window. Choices the spec
 * leaves open: webhooks per plan are 2 / 10 / 50; backtests need Pro or Team, which may have
 * 2 and 5 runs queued or running per key at once; the Free scanner sees snapshots 15 minutes late;
 * a token's history reaches 1 day back on Free, 30 days on Pro and all of it on Team.
 */
export interface PlanLimits {
  label: string;
  requestsPerMinute: number;
  features: {
    /** POST /v1/quant/backtests. */
    backtests: boolean;
    /** Most backtest runs a key may have queued or running at once (409 LIMIT_REACHED beyond). */
    concurrentBacktests: number;
    /** How far behind the live snapshots the scanner runs, in minutes. */
    scannerDelayMinutes: number;
    /** Most webhooks a key may register (409 LIMIT_REACHED beyond). */
    webhooks: number;
    /** How many days back from its `as_of` a token's history may be read; null for all of it. */
    historyDays: number | null;
  };
}

export const PLANS: Readonly<Record<PlanName, PlanLimits>> = {
  free: { label: 'Free', requestsPerMinute: 60, features: { backtests: false, concurrentBacktests: 0, scannerDelayMinutes: 15, webhooks: 2, historyDays: 1 } },
  pro: { label: 'Pro', requestsPerMinute: 600, features: { backtests: true, concurrentBacktests: 2, scannerDelayMinutes: 0, webhooks: 10, historyDays: 30 } },
  team: { label: 'Team', requestsPerMinute: 2000, features: { backtests: true, concurrentBacktests: 5, scannerDelayMinutes: 0, webhooks: 50, historyDays: null } },
};

/** Features a route can be gated on with requirePlanFeature. */
export type PlanFeature = 'backtests' | 'realtime_scanner';

export function planHasFeature(plan: PlanName, feature: PlanFeature): boolean {
  const { features } = PLANS[plan];
  return feature === 'backtests' ? features.backtests : features.scannerDelayMinutes === 0;
}

/** The cheapest plans that include a feature, for the 402 message. */
export function plansWith(feature: PlanFeature): string[] {
  return (Object.keys(PLANS) as PlanName[]).filter((p) => planHasFeature(p, feature)).map((p) => PLANS[p].label);
}
