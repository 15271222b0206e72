import type { BacktestResult } from '../../research/backtest/run.ts';

/** A backtest result as a table for the terminal: the headline figures beside the baseline, then the warnings. */

const pct = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : `${(v * 100).toFixed(2)}%`);
const hours = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '—' : `${(ms / 3_600_000).toFixed(1)} h`);

export function backtestTable(result: BacktestResult): string {
  const b = result.baseline;
  const ci = (r: { hit_rate_ci95: { low: number; high: number } | null }) => (r.hit_rate_ci95 === null ? '—' : `${pct(r.hit_rate_ci95.low)} – ${pct(r.hit_rate_ci95.high)}`);
  const rows: [string, string, string][] = [
    ['', 'entries', 'baseline'],
    ['N', String(result.n), String(b.n)],
    ['hit rate', pct(result.hit_rate), pct(b.hit_rate)],
    ['hit rate 95% (Wilson)', ci(result), ci(b)],
    ['median return', pct(result.median_return), pct(b.median_return)],
    ['mean return', pct(result.mean_return), pct(b.mean_return)],
    ['10% trimmed mean', pct(result.trimmed_mean_return), pct(b.trimmed_mean_return)],
    ['median max drawdown', pct(result.median_max_drawdown), pct(b.median_max_drawdown)],
    ['median time to peak', hours(result.median_time_to_peak_ms), hours(b.median_time_to_peak_ms)],
    ['best', pct(result.best[0]?.return), ''],
    ['worst', pct(result.worst[0]?.return), ''],
  ];
  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.max(...rows.map((r) => r[1].length));
  const lines = [
    `horizon ${result.horizon}, cooldown ${result.cooldown}, dead tokens ${result.dead_token_policy}; window ${result.window.from ?? '—'} → ${result.window.to ?? '—'}; data to ${result.data_end ?? '—'}`,
    ...rows.map(([a, b1, c]) => `${a.padEnd(w0)}  ${b1.padStart(w1)}  ${c}`),
    ...result.warnings.map((w) => `warning ${w.code}: ${w.message}`),
    ...result.leakage_checks.map((c) => `leakage check ${c.check}: ${c.ok ? 'ok' : 'FAILED'} (${c.passed} of ${c.checked} passed)`),
    result.disclaimer,
  ];
  return lines.join('\n') + '\n';
}
