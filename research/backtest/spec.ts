import { HORIZON_MS, HORIZONS, type Horizon } from '../../processors/quant-engine/contracts.ts';
import { isRuleField } from '../../projections/tables/quant.ts';
import { ReadModelError } from '../../projections/read-models/cursor.ts';
import { MAX_SCAN_RULES, type RuleOp, type ScanRule } from '../../projections/read-models/scan.ts';
import { CHAINS, type Chain } from '../../schemas/records/primitives.ts';

/**
 * A backtest request after validation and defaults (spec 4.4): what the engine runs. The API
 * parses the wire body (snake_case, ISO or unix times) into this; normaliseBacktestSpec checks
 * the parts the engine relies on, so the runner can also take a spec from anywhere else.
 */

export { HORIZON_MS, HORIZONS, type Horizon };

export const DEAD_TOKEN_POLICIES = ['last_price', 'total_loss', 'exclude'] as const;
export type DeadTokenPolicy = (typeof DEAD_TOKEN_POLICIES)[number];

export interface BacktestUniverse {
  /** Only entries whose snapshot at entry is on one of these chains. */
  chains?: Chain[];
  /** Only entries whose liquidity at entry is at least this (USD). */
  minLiquidityUsd?: number;
}

export interface BacktestSpec {
  /** Entry conditions, all of which must hold on the snapshot at entry: the scanner's rules (1 to 12). */
  rules: readonly ScanRule[];
  horizon: Horizon;
  /** Window of entry times, epoch ms inclusive; null is the start or end of history. */
  from: number | null;
  to: number | null;
  /** Minimum spacing of two entries of one token. */
  cooldown: Horizon;
  deadTokenPolicy: DeadTokenPolicy;
  universe: BacktestUniverse;
}

/** What a caller may leave out: cooldown defaults to the horizon, the policy to last_price. */
export interface BacktestSpecInput {
  rules: readonly ScanRule[];
  horizon: string;
  from?: number | null;
  to?: number | null;
  cooldown?: string | null;
  deadTokenPolicy?: string | null;
  universe?: { chains?: readonly string[] | null; minLiquidityUsd?: number | null } | null;
}

const OPS: readonly RuleOp[] = ['>', '>=', '<', '<='];

function invalid(message: string): never {
  throw new ReadModelError('INVALID_ARGUMENT', message);
}

function isHorizon(value: unknown): value is Horizon {
  return typeof value === 'string' && (HORIZONS as readonly string[]).includes(value);
}

function time(value: number | null | undefined, name: string): number | null {
  if (value === undefined || value === null) return null;
  if (!Number.isSafeInteger(value) || value < 0) invalid(`${name} must be a time in epoch milliseconds`);
  return value;
}

/** Checks and fills a spec; throws ReadModelError (INVALID_ARGUMENT or INVALID_FIELD) on bad input. */
export function normaliseBacktestSpec(input: BacktestSpecInput): BacktestSpec {
  if (!Array.isArray(input.rules) || input.rules.length < 1 || input.rules.length > MAX_SCAN_RULES) {
    invalid(`rules must hold 1 to ${MAX_SCAN_RULES} rules`);
  }
  const rules = input.rules.map((rule, i): ScanRule => {
    if (!isRuleField(rule.field)) throw new ReadModelError('INVALID_FIELD', `unknown rule field ${JSON.stringify(rule.field)}`);
    if (!OPS.includes(rule.op)) invalid(`rules[${i}].op must be one of ${OPS.join(', ')}`);
    if (typeof rule.value !== 'number' || !Number.isFinite(rule.value)) invalid(`rules[${i}].value must be a finite number`);
    return { field: rule.field, op: rule.op, value: rule.value };
  });
  if (!isHorizon(input.horizon)) invalid(`horizon must be one of ${HORIZONS.join(', ')}`);
  const cooldown = input.cooldown ?? input.horizon;
  if (!isHorizon(cooldown)) invalid(`cooldown must be one of ${HORIZONS.join(', ')}`);
  const policy = input.deadTokenPolicy ?? 'last_price';
  if (!(DEAD_TOKEN_POLICIES as readonly string[]).includes(policy)) invalid(`dead_token_policy must be one of ${DEAD_TOKEN_POLICIES.join(', ')}`);
  const from = time(input.from, 'from');
  const to = time(input.to, 'to');
  if (from !== null && to !== null && from > to) invalid('from must not be after to');
  const universe: BacktestUniverse = {};
  const chains = input.universe?.chains;
  if (chains !== undefined && chains !== null) {
    const unknown = chains.filter((c) => !(CHAINS as readonly string[]).includes(c));
    if (unknown.length > 0) invalid(`universe.chains: unknown chain ${JSON.stringify(unknown[0])}`);
    if (chains.length > 0) universe.chains = [...new Set(chains)] as Chain[];
  }
  const minLiquidity = input.universe?.minLiquidityUsd;
  if (minLiquidity !== undefined && minLiquidity !== null) {
    if (typeof minLiquidity !== 'number' || !Number.isFinite(minLiquidity) || minLiquidity < 0) {
      invalid('universe.min_liquidity_usd must be a non-negative number');
    }
    universe.minLiquidityUsd = minLiquidity;
  }
  return { rules, horizon: input.horizon, from, to, cooldown, deadTokenPolicy: policy as DeadTokenPolicy, universe };
}
