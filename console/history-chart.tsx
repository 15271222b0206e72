import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Schemas } from './api.ts';

/** A token's scores (left axis, 0–100) against its price (right axis) over time, drawn by uPlot. */

type Point = Schemas['TokenHistoryPoint'];
const SCORE_COLOURS = { momentum: '#d62728', conviction: '#1f77b4', crowding: '#ff7f0e', early_quality: '#2ca02c' } as const;

export function HistoryChart({ points }: { points: Point[] }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const names = Object.keys(SCORE_COLOURS) as (keyof typeof SCORE_COLOURS)[];
    const data: uPlot.AlignedData = [
      points.map((p) => Date.parse(p.ts) / 1000),
      ...names.map((name) => points.map((p) => p.scores[name])),
      points.map((p) => p.price_usd),
    ];
    const chart = new uPlot(
      {
        width: Math.min(900, host.current!.clientWidth || 900),
        height: 320,
        series: [{}, ...names.map((name) => ({ label: name, stroke: SCORE_COLOURS[name], scale: 'score' })), { label: 'price (USD)', stroke: '#444', width: 2, scale: 'usd' }],
        scales: { score: { range: [0, 100] } },
        axes: [{}, { scale: 'score', label: 'score' }, { scale: 'usd', side: 1, label: 'price (USD)', grid: { show: false } }],
      },
      data,
      host.current!,
    );
    return () => chart.destroy();
  }, [points]);
  // The number of points drawn, for whoever checks the chart against the API.
  return <div class="chart" ref={host} data-points={points.length} />;
}
