import { unwrap } from '../../client/index.ts';
import { apiFor } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { minute, orMissing, percent, points } from '../format.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';

/** Where attention moved: each narrative's share of all mentions over the window against the window before, largest gain first. */

export type RotationWindow = '24h' | '7d';

export function Rotation({ session, window }: { session: Session; window: RotationWindow }) {
  const { data, error } = useAnswer(
    () => apiFor(session.key).GET('/v1/quant/narratives/rotation', { params: { query: { window } } }).then(unwrap),
    [session.key, window],
  );
  if (error !== null) return <ErrorBox error={error} />;
  if (data === null) return <p>Loading…</p>;
  if (data.from === null || data.to === null) return <p>No narrative data yet.</p>;
  return (
    <table class="rotation" data-window={data.window}>
      <caption>
        {minute(data.from)} to {minute(data.to)} against the {data.window} before
      </caption>
      <thead>
        <tr>
          <th>narrative</th>
          <th>share</th>
          <th>share before</th>
          <th>change</th>
        </tr>
      </thead>
      <tbody>
        {data.narratives.map((n) => (
          <tr data-narrative={n.slug}>
            <td>
              <a href={`#/narrative/${n.slug}`}>{n.slug}</a>
            </td>
            <td class="num">{orMissing(n.share, percent, 'no mentions in the window')}</td>
            <td class="num">{orMissing(n.previous_share, percent, 'no mentions in the window before')}</td>
            <td class="num" data-field="change">
              {orMissing(n.change, points, 'a share is unknown')}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
