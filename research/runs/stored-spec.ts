import type { Chain } from '../../schemas/records/primitives.ts';
import type { Horizon } from '../../processors/quant-engine/contracts.ts';
import type { RuleField } from '../../projections/tables/quant.ts';

/**
 * The validated request as a backtest request record stores it (its `spec` JSON): the engine's
 * BacktestSpec (research/backtest/spec.ts) field for field, times in epoch ms, null for open ends.
 */
export interface StoredSpec {
  rules: { field: RuleField; op: '>' | '>=' | '<' | '<='; value: number }[];
  horizon: Horizon;
  from: number | null;
  to: number | null;
  cooldown: Horizon;
  deadTokenPolicy: 'last_price' | 'total_loss' | 'exclude';
  universe: { chains?: Chain[]; minLiquidityUsd?: number };
}
