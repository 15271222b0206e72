import { useMemo } from 'preact/hooks';
import type uPlot from 'uplot';
import type { EventStudyHorizon } from '../../research/event-studies/compute.ts';
import { Chart, percentAxis } from '../chart.tsx';
import { HORIZON_HOURS, returnLegend } from '../research-values.ts';

/**
 * An event study's average path: the mean return after the events at each horizon, inside the
 * band from the 25th to the 75th percentile of those returns, beside the baseline's mean. Time
 * since the event runs on a log scale, so 15 minutes and 7 days both have room.
 */

/** The quantile of a horizon's return distribution; null when it had no resolved events. */
export const quantile = (h: EventStudyHorizon, q: number) => h.return_distribution.quantiles.find((x) => x.q === q)?.value ?? null;
export const BAND = [0.25, 0.75] as const;

export function StudyPathChart({ horizons }: { horizons: EventStudyHorizon[] }) {
  const data = useMemo<uPlot.AlignedData>(
    () => [
      horizons.map((h) => HORIZON_HOURS[h.horizon]),
      horizons.map((h) => h.mean_return),
      horizons.map((h) => quantile(h, BAND[1])),
      horizons.map((h) => quantile(h, BAND[0])),
      horizons.map((h) => h.baseline.mean_return),
    ],
    [horizons],
  );
  const hoursShown = data[0] as number[];
  const label = (h: number) => horizons.find((x) => HORIZON_HOURS[x.horizon] === h)?.horizon ?? '';
  return (
    <Chart
      name="study-path"
      data={data}
      height={320}
      attrs={{ 'data-horizons': horizons.map((h) => h.horizon).join(',') }}
      options={{
        title: 'Mean return after the events, with the 25–75% band',
        scales: { x: { time: false, distr: 3 } },
        series: [
          { label: 'after', value: (_, h) => label(h) },
          { label: 'mean return', stroke: '#d62728', width: 2, value: returnLegend },
          { label: '75th percentile', stroke: '#d6272855', value: returnLegend },
          { label: '25th percentile', stroke: '#d6272855', value: returnLegend },
          { label: 'baseline mean', stroke: '#888', dash: [6, 4], value: returnLegend },
        ],
        bands: [{ series: [2, 3], fill: '#d627281f' }],
        // A log axis labels only powers of ten unless told to keep every split.
        axes: [{ splits: () => hoursShown, filter: (_, splits) => splits, values: (_, splits) => splits.map(label) }, percentAxis],
      }}
    />
  );
}
