import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import type { BacktestEvent, BacktestResult } from '../../research/backtest/run.ts';
import { Chart, percentAxis, percentTicks } from '../chart.tsx';
import { returnLegend } from '../research-values.ts';

/** A backtest result's charts: the histogram of its returns, and its cumulative path beside the baseline's. */

type Histogram = BacktestResult['return_distribution']['histogram'];

/** The x range: the outer bins' edges, so no bar is cut in half; a sample of one repeated value (one bin, no width) gets room around it. */
function binRange(histogram: Histogram): uPlot.Range.MinMax {
  const [from, to] = [histogram[0].from, histogram.at(-1)!.to];
  return from === to ? [from - 0.05, to + 0.05] : [from, to];
}

export function ReturnHistogram({ histogram }: { histogram: Histogram }) {
  const data = useMemo<uPlot.AlignedData>(() => [histogram.map((b) => (b.from + b.to) / 2), histogram.map((b) => b.count)], [histogram]);
  return (
    <Chart
      name="return-histogram"
      data={data}
      attrs={{ 'data-bins': histogram.length }}
      options={(library) => ({
        title: 'Return distribution',
        scales: { x: { time: false, range: () => binRange(histogram) } },
        series: [
          { label: 'return (bin centre)', value: returnLegend },
          { label: 'entries', fill: '#1f77b466', stroke: '#1f77b4', paths: library.paths.bars!({ size: [0.95, Infinity] }), points: { show: false } },
        ],
        axes: [{ values: percentTicks }, { label: 'entries' }],
      })}
    />
  );
}

/**
 * The sum of the returns realised by each exit time, one unit per entry, beside what as many
 * entries would have made at the baseline's mean return: the gap between the two is the excess.
 */
function cumulativePath(events: readonly BacktestEvent[], baselineMean: number | null): uPlot.AlignedData {
  const byExit = new Map<number, { sum: number; count: number }>();
  for (const e of [...events].sort((a, b) => Date.parse(a.exit_at) - Date.parse(b.exit_at))) {
    const at = Date.parse(e.exit_at) / 1000;
    const step = byExit.get(at) ?? { sum: 0, count: 0 };
    byExit.set(at, { sum: step.sum + e.return, count: step.count + 1 });
  }
  let sum = 0;
  let count = 0;
  const times: number[] = [];
  const path: number[] = [];
  const baseline: (number | null)[] = [];
  for (const [at, step] of byExit) {
    sum += step.sum;
    count += step.count;
    times.push(at);
    path.push(sum);
    baseline.push(baselineMean === null ? null : count * baselineMean);
  }
  return [times, path, baseline];
}

export function CumulativePath({ result }: { result: BacktestResult }) {
  const data = useMemo(() => cumulativePath(result.events, result.baseline.mean_return), [result]);
  const path = data[1] as number[];
  return (
    <Chart
      name="cumulative-path"
      data={data}
      attrs={{ 'data-points': path.length, 'data-final': path.at(-1) ?? 0 }}
      options={{
        title: 'Cumulative return (one unit per entry, by exit time)',
        series: [
          {},
          { label: 'backtest', stroke: '#d62728', width: 2, value: returnLegend },
          { label: 'baseline mean × entries', stroke: '#888', dash: [6, 4], value: returnLegend },
        ],
        axes: [{}, percentAxis],
      }}
    />
  );
}
