import { timeInputMs, type CreateBacktestBody } from './schemas/research.ts';
import type { StoredSpec } from '../research/runs/stored-spec.ts';

// In api/, not research/: it maps the API's request body (api/schemas/research.ts), and research may not import api.

/** A validated request body (POST /v1/quant/backtests, or `tqa backtest`'s options) with its defaults filled in. */
export function specOf(body: CreateBacktestBody): StoredSpec {
  const universe: StoredSpec['universe'] = {};
  if (body.universe?.chains !== undefined) universe.chains = [...new Set(body.universe.chains)];
  if (body.universe?.min_liquidity_usd !== undefined) universe.minLiquidityUsd = body.universe.min_liquidity_usd;
  return {
    rules: body.rules,
    horizon: body.horizon,
    from: body.from === undefined ? null : timeInputMs(body.from),
    to: body.to === undefined ? null : timeInputMs(body.to),
    cooldown: body.cooldown ?? body.horizon,
    deadTokenPolicy: body.dead_token_policy ?? 'last_price',
    universe,
  };
}
