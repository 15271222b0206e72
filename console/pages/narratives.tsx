import { unwrap } from '../../client/index.ts';
import { apiFor } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { minute, orMissing, percent, points } from '../format.tsx';
import { choicesOf, choose } from '../fragment-query.ts';
import { NeedsScope } from '../needs-scope.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';
import { growth, NARRATIVE_WHY_NULL } from './narrative.tsx';
import { NarrativeHeatmap, type HeatmapShape } from './narrative-heatmap.tsx';
import { Rotation, type RotationWindow } from './narrative-rotation.tsx';

/**
 * Narratives: the map as of the latest closed hour, the rotation of attention between them and
 * the heatmap over time. The rotation's window and the heatmap's shape live in the fragment's
 * query (`#/narratives?window=7d&metric=theses&bucket=6h&range=7d`), so a view is a link.
 */

type Choices = HeatmapShape & { window: RotationWindow };
const DEFAULTS: Choices = { window: '24h', metric: 'theses', bucket: '1h', range: '48h' };
const OPTIONS: { [name in keyof Choices]: readonly Choices[name][] } = {
  window: ['24h', '7d'],
  metric: ['theses', 'author_growth'],
  bucket: ['1h', '6h', '1d'],
  range: ['48h', '7d', '30d'],
};

function NarrativeMap({ session }: { session: Session }) {
  const { data, error } = useAnswer(() => apiFor(session.key).GET('/v1/quant/narratives').then(unwrap), [session.key]);
  if (error !== null) return <ErrorBox error={error} />;
  if (data === null) return <p>Loading…</p>;
  if (data.data.length === 0) return <p>No narrative data yet.</p>;
  return (
    <table class="narratives">
      <caption>The latest closed hour{data.as_of !== null && `, up to ${minute(data.as_of)}`}</caption>
      <thead>
        <tr>
          <th>narrative</th>
          <th>attention share</th>
          <th>share, 24 h</th>
          <th>24 h growth</th>
          <th>theses</th>
          <th>authors</th>
          <th>author growth</th>
          <th>top tokens</th>
        </tr>
      </thead>
      <tbody>
        {data.data.map((n) => (
          <tr data-narrative={n.slug}>
            <td>
              <a href={`#/narrative/${n.slug}`}>{n.slug}</a>
            </td>
            <td class="num">{orMissing(n.attention_share, percent, NARRATIVE_WHY_NULL.share)}</td>
            <td class="num">{orMissing(n.attention_share_24h, percent, NARRATIVE_WHY_NULL.share24h)}</td>
            <td class="num">{orMissing(n.attention_share_change_24h, points, NARRATIVE_WHY_NULL.change24h)}</td>
            <td class="num">{n.theses}</td>
            <td class="num">{n.unique_authors}</td>
            <td class="num">{orMissing(n.author_growth, growth, NARRATIVE_WHY_NULL.authorGrowth)}</td>
            <td>{n.top_tokens.map((t) => t.symbol ?? t.token_id).join(', ')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function NarrativesPage({ session, query }: { session: Session; query: string }) {
  const choices = choicesOf(query, DEFAULTS);
  const select = (name: keyof Choices) => (
    <select name={name} value={choices[name]} onChange={(e) => choose('narratives', { ...choices, [name]: (e.target as HTMLSelectElement).value })}>
      {OPTIONS[name].map((option) => (
        <option value={option}>{option}</option>
      ))}
    </select>
  );
  const { window: rotationWindow, ...shape } = choices;
  return (
    <section>
      <h1>Narratives</h1>
      <NeedsScope session={session} scope="quant:read" what="narratives">
        <NarrativeMap session={session} />
        <h2>Rotation</h2>
        <div class="controls">
          <label>Window {select('window')}</label>
        </div>
        <Rotation session={session} window={rotationWindow} />
        <h2>Heatmap</h2>
        <div class="controls">
          <label>Metric {select('metric')}</label>
          <label>Bucket {select('bucket')}</label>
          <label>Range {select('range')}</label>
        </div>
        <NarrativeHeatmap session={session} shape={shape} />
      </NeedsScope>
    </section>
  );
}
