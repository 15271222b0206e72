import { unwrap, type operations } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { minute } from '../format.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';
import { growth } from './narrative.tsx';

/**
 * Narratives by time: a row per narrative, a cell per bucket, each cell shaded by the intensity
 * the API gives (its value against the row's largest), its time and raw value in its title.
 */

export type HeatmapShape = Required<Omit<NonNullable<operations['getNarrativeHeatmap']['parameters']['query']>, 'as_of'>>;
type Heatmap = Schemas['NarrativeHeatmap'];

/** A cell's raw value as the metric reads; a null is an author growth without a baseline or data. */
function valueText(map: Heatmap, value: number | null): string {
  if (value === null) return '– (no baseline or data)';
  return map.metric === 'theses' ? `${value} theses` : `author growth ${growth(value)}`;
}

/** The columns grouped by UTC day: the time axis labels days, not every bucket. */
function days(columns: string[]): { day: string; span: number }[] {
  const groups: { day: string; span: number }[] = [];
  for (const column of columns) {
    const day = column.slice(5, 10);
    if (groups.at(-1)?.day === day) groups[groups.length - 1].span++;
    else groups.push({ day, span: 1 });
  }
  return groups;
}

/** A day with few hourly columns in the range (at its ends) goes unlabelled, so its label does not widen their cells. */
const MIN_LABELLED_SPAN = 3;

export function NarrativeHeatmap({ session, shape }: { session: Session; shape: HeatmapShape }) {
  const query = new URLSearchParams(shape).toString();
  const { data: map, error } = useAnswer(
    () => apiFor(session.key).GET('/v1/quant/narratives/heatmap', { params: { query: shape } }).then(unwrap),
    [session.key, query],
  );
  if (error !== null) return <ErrorBox error={error} />;
  if (map === null) return <p>Loading…</p>;
  if (map.rows.length === 0) return <p>No narrative has data in the range.</p>;
  return (
    <div class="heatmap-scroll">
      <table class="heatmap" data-query={query}>
        <caption>
          {map.metric} per {map.bucket} bucket, {minute(map.columns[0])} to {minute(map.columns[map.columns.length - 1])} UTC (column starts); darker is
          nearer the row's largest value
        </caption>
        <thead>
          <tr>
            <th />
            {days(map.columns).map(({ day, span }) => (
              <th class="day" colSpan={span}>
                {span >= MIN_LABELLED_SPAN || map.bucket === '1d' ? day : ''}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {map.rows.map((row) => (
            <tr data-narrative={row.slug}>
              <th>
                <a href={`#/narrative/${row.slug}`}>{row.slug}</a>
              </th>
              {row.values.map((value, i) => (
                <td
                  class="cell"
                  style={{ background: `rgba(29, 78, 216, ${row.intensity[i]})` }}
                  title={`${minute(map.columns[i])}: ${valueText(map, value)}`}
                  data-value={value ?? ''}
                  data-intensity={row.intensity[i]}
                />
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
