import type { BacktestResult } from '../research/backtest/run.ts';
import type { Schemas } from './api.ts';

/** What the research pages share: the horizons, how a run's rules read, and how returns and intervals show. */

type Horizon = Schemas['BacktestRun']['spec']['horizon'];

// Every horizon the API takes, in hours: the compiler checks the keys against the API's list, both ways.
export const HORIZON_HOURS = { '15m': 0.25, '1h': 1, '6h': 6, '24h': 24, '3d': 72, '7d': 168 } satisfies Record<Horizon, number>;
export const HORIZONS = Object.keys(HORIZON_HOURS) as Horizon[];

/** A return is a fraction: 0.05 shows as +5.00%. Two decimals, as returns are often small. */
export const signedPercent = (v: number) => `${v > 0 ? '+' : ''}${(v * 100).toFixed(2)}%`;

/** A run's result, null until it is done. The API documents it as open fields and passes the engine's result as is, so the engine's type names them. */
export const resultOf = (run: Schemas['BacktestRun']) => run.result as unknown as BacktestResult | null;

/** The rules as one condition: `momentum >= 60 and liquidity_usd > 10000`. */
export const rulesText = (rules: Schemas['ScanRule'][]) => rules.map((r) => `${r.field} ${r.op} ${r.value}`).join(' and ');

/** A return in a chart's legend, where uPlot gives null for a gap. */
export const returnLegend = (_: unknown, v: number | null) => (v === null ? '–' : signedPercent(v));
