import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

/**
 * A uPlot chart as wide as its box (at most 900 px). It is drawn again only when `data`
 * changes, so callers memoise their data; the options are read at that moment. `attrs`
 * describe what was drawn, for whoever checks the chart against the API.
 */
export function Chart({
  name,
  options,
  data,
  height = 260,
  attrs = {},
}: {
  name: string;
  options: Omit<uPlot.Options, 'width' | 'height'>;
  data: uPlot.AlignedData;
  height?: number;
  attrs?: Record<`data-${string}`, string | number>;
}) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const chart = new uPlot({ ...options, width: Math.min(900, host.current!.clientWidth || 900), height }, data, host.current!);
    return () => chart.destroy();
  }, [data]);
  return <div class={`chart ${name}`} ref={host} {...attrs} />;
}

/** Axis labels for fractions shown as percentages, with as many digits as the ticks need. */
export const percentTicks = (_: uPlot, splits: number[]) => splits.map((v) => `${Number((v * 100).toPrecision(3))}%`);

/** A value axis of fractions, wide enough for labels such as -1250%. */
export const percentAxis: uPlot.Axis = { values: percentTicks, size: 70 };
