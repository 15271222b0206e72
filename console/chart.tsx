import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';

/**
 * uPlot, loaded (a chunk of its own) when the first chart is drawn: the pages without charts,
 * the tokens page first of all, neither load nor run it.
 */
let library: Promise<typeof uPlot> | undefined;
const loadUplot = () => (library ??= import('uplot').then((module) => module.default));

export type ChartOptions = Omit<uPlot.Options, 'width' | 'height'>;

/**
 * A uPlot chart as wide as its box (at most 900 px). It is drawn again only when `data`
 * changes, so callers memoise their data; the options are read at that moment (a function of
 * uPlot for options that need it, such as its bar paths). `attrs` describe what was drawn, for
 * whoever checks the chart against the API; `data-drawn` is set once it is.
 */
export function Chart({
  name,
  options,
  data,
  height = 260,
  attrs = {},
}: {
  name: string;
  options: ChartOptions | ((library: typeof uPlot) => ChartOptions);
  data: uPlot.AlignedData;
  height?: number;
  attrs?: Record<`data-${string}`, string | number>;
}) {
  const host = useRef<HTMLDivElement>(null);
  const [drawn, setDrawn] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    let chart: uPlot | undefined;
    let gone = false;
    loadUplot().then(
      (UPlot) => {
        if (gone) return;
        const chosen = typeof options === 'function' ? options(UPlot) : options;
        chart = new UPlot({ ...chosen, width: Math.min(900, host.current!.clientWidth || 900), height }, data, host.current!);
        setDrawn(true);
      },
      (err: unknown) => {
        if (!gone) setFailure(`the chart could not be loaded: ${String(err)}`);
      },
    );
    return () => {
      gone = true;
      chart?.destroy();
    };
  }, [data]);
  return (
    <div class={`chart ${name}`} ref={host} data-drawn={drawn ? '' : undefined} {...attrs}>
      {failure !== null && <p class="notice">{failure}</p>}
    </div>
  );
}

/** Axis labels for fractions shown as percentages, with as many digits as the ticks need. */
export const percentTicks = (_: uPlot, splits: number[]) => splits.map((v) => `${Number((v * 100).toPrecision(3))}%`);

/** A value axis of fractions, wide enough for labels such as -1250%. */
export const percentAxis: uPlot.Axis = { values: percentTicks, size: 70 };
