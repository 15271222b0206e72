import type { Schemas } from '../api.ts';
import { AuthorLink, minute, TokenLink } from '../format.tsx';

/** A cohort's convergence events, newest first: the token, how many of its members, who, and the event's score. */

type Cohort = Schemas['Cohort'];

/**
 * A converging member as a link to the author when the cohort's members name them (by author
 * id, handle or `@handle`); as given otherwise, e.g. a member of an earlier membership version.
 */
function Converging({ name, cohort }: { name: string; cohort: Cohort }) {
  const member = cohort.members.find((m) => name === m.author_id || name.replace(/^@/, '') === m.handle);
  return member === undefined ? <>{name}</> : <AuthorLink handle={member.handle} />;
}

export function Convergence({ cohort }: { cohort: Cohort }) {
  if (cohort.convergence_events.length === 0) return <p>None yet.</p>;
  return (
    <table class="convergence">
      <thead>
        <tr>
          <th>at</th>
          <th>token</th>
          <th>members</th>
          <th>who</th>
          <th>score</th>
        </tr>
      </thead>
      <tbody>
        {cohort.convergence_events.map((e) => (
          <tr data-event={e.id}>
            <td>{minute(e.at)}</td>
            <td>
              <TokenLink token={e.token} />
            </td>
            <td class="num">
              {e.member_count} of {e.cohort_size} in {e.window_minutes} min
            </td>
            <td>
              {e.members.map((name, i) => (
                <>
                  {i > 0 && ', '}
                  <Converging name={name} cohort={cohort} />
                </>
              ))}
            </td>
            <td class="num">{e.score.toFixed(1)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
