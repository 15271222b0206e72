import { header, iso, DISCLAIMER } from '../../presenters/resource.ts';
import type { BacktestView } from '../../projections/read-models/research.ts';
import type { StoredSpec } from './stored-spec.ts';

/** A run as the API shows it (camelCase; the router renames). The engine's result is already in wire form and passes as is. */
export function presentBacktest({ request, run }: BacktestView) {
  const spec = JSON.parse(request.spec) as StoredSpec;
  const status = run === null ? ('queued' as const) : (run.status as 'running' | 'done' | 'failed' | 'canceled');
  return {
    ...header('backtest_run'),
    id: request.run_id,
    name: request.name,
    status,
    spec: {
      rules: spec.rules.map((r) => ({ field: r.field, op: r.op, value: r.value })),
      horizon: spec.horizon,
      from: iso(spec.from),
      to: iso(spec.to),
      cooldown: spec.cooldown,
      deadTokenPolicy: spec.deadTokenPolicy,
      universe: { chains: spec.universe.chains ?? null, minLiquidityUsd: spec.universe.minLiquidityUsd ?? null },
    },
    progress: run === null ? null : { scanned: run.scanned, total: run.total, fraction: run.total === 0 ? (status === 'running' ? 0 : 1) : Math.min(1, run.scanned / run.total) },
    attempt: run?.attempt ?? 0,
    asOf: iso(run?.as_of ?? null),
    reason: run?.reason ?? null,
    createdAt: iso(request.created_at),
    startedAt: iso(run?.started_at ?? null),
    finishedAt: iso(run?.finished_at ?? null),
    cancelRequestedAt: iso(request.cancel_requested_at),
    result: run?.result ? (JSON.parse(run.result) as Record<string, unknown>) : null,
    disclaimer: DISCLAIMER as typeof DISCLAIMER,
  };
}
