import { unwrap } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { minute } from '../format.tsx';
import { choicesOf, choose } from '../fragment-query.ts';
import { NeedsScope } from '../needs-scope.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';

/** The cohorts the key sees (every auto cohort, and the manual ones it owns or its team shares), by kind. */

type Kind = 'all' | 'auto' | 'manual';
const KINDS: Kind[] = ['all', 'auto', 'manual'];

/** Who sees a cohort, as far as this key can tell. */
function audience(c: Schemas['CohortSummary'], session: Session): string {
  if (c.kind === 'auto') return 'every key';
  if (c.owner_key_id === session.info.id) return c.team_id === null ? 'this key' : 'this key and its team';
  return 'shared with this key’s team';
}

function Cohorts({ session, kind }: { session: Session; kind: Kind }) {
  const { data, error } = useAnswer(
    () => apiFor(session.key).GET('/v1/quant/cohorts', { params: { query: { kind } } }).then(unwrap),
    [session.key, kind],
  );
  if (error !== null) return <ErrorBox error={error} />;
  if (data === null) return <p>Loading…</p>;
  if (data.data.length === 0) return <p>No cohorts.</p>;
  return (
    <table class="cohorts" data-kind={kind}>
      <thead>
        <tr>
          <th>cohort</th>
          <th>kind</th>
          <th>members</th>
          <th>how members are chosen</th>
          <th>version</th>
          <th>seen by</th>
        </tr>
      </thead>
      <tbody>
        {data.data.map((c) => (
          <tr data-cohort={c.id}>
            <td>
              <a href={`#/cohort/${c.id}`}>{c.name}</a>
            </td>
            <td>{c.kind}</td>
            <td class="num">{c.member_count}</td>
            <td>{c.rule}</td>
            <td>
              {c.version} <small>since {minute(c.updated_at)}</small>
            </td>
            <td>{audience(c, session)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function CohortsPage({ session, query }: { session: Session; query: string }) {
  const { kind } = choicesOf<{ kind: Kind }>(query, { kind: 'all' });
  return (
    <section>
      <h1>Cohorts</h1>
      <NeedsScope session={session} scope="quant:read" what="cohorts">
        <div class="controls">
          <label>
            Kind{' '}
            <select name="kind" value={kind} onChange={(e) => choose('cohorts', { kind: (e.target as HTMLSelectElement).value })}>
              {KINDS.map((k) => (
                <option value={k}>{k}</option>
              ))}
            </select>
          </label>
        </div>
        <Cohorts session={session} kind={kind} />
      </NeedsScope>
    </section>
  );
}
