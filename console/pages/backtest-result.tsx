import type { ComponentChildren } from 'preact';
import type { BacktestResult } from '../../research/backtest/run.ts';
import type { Schemas } from '../api.ts';
import { hours, interval, minute, orMissing, percent, points } from '../format.tsx';
import { resultOf, rulesText, signedPercent } from '../research-values.ts';
import { CumulativePath, ReturnHistogram } from './backtest-charts.tsx';
import { EventsExport, EventsTable } from './backtest-events.tsx';

/** One backtest run: what was asked, its progress, and once done its result beside the baseline. */

type Run = Schemas['BacktestRun'];

export function RunView({ run }: { run: Run }) {
  const { spec } = run;
  const { chains, min_liquidity_usd: minLiquidity } = spec.universe;
  const universe = [chains?.join(', ') ?? 'every chain', ...(minLiquidity === null ? [] : [`liquidity ≥ $${minLiquidity}`])];
  const result = resultOf(run);
  return (
    <div class="run" data-run={run.id} data-status={run.status}>
      <h2>
        Run {run.id}
        {run.name !== null && `: ${run.name}`}
      </h2>
      <p class="spec">
        Enter when {rulesText(spec.rules)}; horizon {spec.horizon}, cooldown {spec.cooldown}, dead tokens {spec.dead_token_policy}; universe{' '}
        {universe.join(', ')}.
      </p>
      <p class="progress">
        {run.status}
        {run.progress !== null && (
          <>
            {' '}
            <progress value={run.progress.fraction} /> {run.progress.scanned} of {run.progress.total} snapshots scanned
          </>
        )}
        {run.reason !== null && ` (${run.reason})`}
      </p>
      {result !== null && <ResultView runId={run.id} result={result} />}
    </div>
  );
}

interface FigureProps {
  field: string;
  label: string;
  run: number | null;
  baseline: number | null;
  /** Run minus baseline, where the result states it. */
  excess?: ComponentChildren;
  show: (v: number) => string;
}

/** A figure of the run beside the baseline's; the run's raw value is kept for whoever checks it against the API. */
function Figure({ field, label, run, baseline, excess, show }: FigureProps) {
  return (
    <tr data-field={field}>
      <th>{label}</th>
      <td class="num run" data-value={String(run)}>
        {orMissing(run, show)}
      </td>
      <td class="num baseline">{orMissing(baseline, show)}</td>
      <td class="num excess">{excess}</td>
    </tr>
  );
}

function ResultView({ runId, result }: { runId: string; result: BacktestResult }) {
  const { baseline, excess } = result;
  return (
    <>
      {result.warnings.length > 0 && (
        <ul class="warnings">
          {result.warnings.map((w) => (
            <li data-code={w.code}>{w.message}</li>
          ))}
        </ul>
      )}
      <table class="summary">
        <thead>
          <tr>
            <th />
            <th>backtest</th>
            <th>baseline</th>
            <th>excess</th>
          </tr>
        </thead>
        <tbody>
          <Figure field="n" label="entries (N)" run={result.n} baseline={baseline.n} show={String} />
          <Figure field="hit_rate" label="hit rate (return > 0)" run={result.hit_rate} baseline={baseline.hit_rate} excess={orMissing(excess.hit_rate, points)} show={percent} />
          <tr data-field="hit_rate_ci95">
            <th>hit rate, 95% Wilson interval</th>
            <td class="num run">{orMissing(result.hit_rate_ci95, interval)}</td>
            <td class="num baseline">{orMissing(baseline.hit_rate_ci95, interval)}</td>
            <td />
          </tr>
          <Figure field="median_return" label="median return" run={result.median_return} baseline={baseline.median_return} excess={orMissing(excess.median_return, signedPercent)} show={signedPercent} />
          <Figure field="mean_return" label="mean return" run={result.mean_return} baseline={baseline.mean_return} excess={orMissing(excess.mean_return, signedPercent)} show={signedPercent} />
          <Figure field="trimmed_mean_return" label="10% trimmed mean return" run={result.trimmed_mean_return} baseline={baseline.trimmed_mean_return} show={signedPercent} />
          <Figure field="median_max_drawdown" label="median max drawdown" run={result.median_max_drawdown} baseline={baseline.median_max_drawdown} show={signedPercent} />
          <Figure field="median_time_to_peak_ms" label="median time to peak" run={result.median_time_to_peak_ms} baseline={baseline.median_time_to_peak_ms} show={hours} />
        </tbody>
      </table>
      <p class="baseline-description">Baseline: {baseline.description}</p>
      <p class="counts">
        Window {orMissing(result.window.from, minute)} to {orMissing(result.window.to, minute)}: {result.counts.candidates} snapshots passed the rules, {result.counts.cooled_down} within a
        cooldown, {result.counts.unpriced} without a price, {result.counts.unresolved} unresolved, {result.counts.dead} died ({result.counts.dead_excluded}{' '}
        left out). Best {orMissing(result.best[0]?.return ?? null, signedPercent)}, worst {orMissing(result.worst[0]?.return ?? null, signedPercent)}.
      </p>
      {result.n > 0 && (
        <>
          <div class="charts">
            <ReturnHistogram histogram={result.return_distribution.histogram} />
            <CumulativePath result={result} />
          </div>
          <Quantiles result={result} />
        </>
      )}
      <h3>Leakage checks</h3>
      <table class="leakage">
        <thead>
          <tr>
            <th>check</th>
            <th>what it verified</th>
            <th>passed</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {result.leakage_checks.map((c) => (
            <tr data-check={c.check} data-ok={String(c.ok)}>
              <td>{c.check}</td>
              <td>{c.verified}</td>
              <td class="num">
                {c.passed} of {c.checked}
              </td>
              <td class={c.ok ? 'ok' : 'failed'}>{c.ok ? 'ok' : 'FAILED'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Events</h3>
      <EventsExport runId={runId} result={result} />
      <EventsTable events={result.events} />
      <p class="disclaimer">{result.disclaimer}</p>
    </>
  );
}

function Quantiles({ result }: { result: BacktestResult }) {
  const rows = [
    ['return', result.return_distribution],
    ['max drawdown', result.drawdown_distribution],
  ] as const;
  return (
    <table class="quantiles">
      <thead>
        <tr>
          <th>quantile</th>
          {result.return_distribution.quantiles.map((q) => (
            <th class="num">{q.q * 100}%</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map(([label, distribution]) => (
          <tr>
            <th>{label}</th>
            {distribution.quantiles.map((q) => (
              <td class="num">{signedPercent(q.value)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
