import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import type { Schemas } from './api.ts';
import { Chart } from './chart.tsx';

/** A token's scores (left axis, 0–100) against its price (right axis) over time. */

type Point = Schemas['TokenHistoryPoint'];
const SCORE_COLOURS = { momentum: '#d62728', conviction: '#1f77b4', crowding: '#ff7f0e', early_quality: '#2ca02c' } as const;
const NAMES = Object.keys(SCORE_COLOURS) as (keyof typeof SCORE_COLOURS)[];

export function HistoryChart({ points }: { points: Point[] }) {
  const data = useMemo<uPlot.AlignedData>(
    () => [points.map((p) => Date.parse(p.ts) / 1000), ...NAMES.map((name) => points.map((p) => p.scores[name])), points.map((p) => p.price_usd)],
    [points],
  );
  return (
    <Chart
      name="history"
      data={data}
      height={320}
      // The number of points drawn, for whoever checks the chart against the API.
      attrs={{ 'data-points': points.length }}
      options={{
        series: [{}, ...NAMES.map((name) => ({ label: name, stroke: SCORE_COLOURS[name], scale: 'score' })), { label: 'price (USD)', stroke: '#444', width: 2, scale: 'usd' }],
        scales: { score: { range: [0, 100] } },
        axes: [{}, { scale: 'score', label: 'score' }, { scale: 'usd', side: 1, label: 'price (USD)', grid: { show: false } }],
      }}
    />
  );
}
