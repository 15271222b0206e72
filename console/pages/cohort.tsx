import { unwrap } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { AuthorLink, minute, TokenLink } from '../format.tsx';
import { NeedsScope } from '../needs-scope.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';
import { Convergence } from './cohort-convergence.tsx';

/** One cohort as of one time: its members, what they posted in the last 24 hours, and where they converged. */

type Cohort = Schemas['Cohort'];

function Members({ cohort }: { cohort: Cohort }) {
  return (
    <table class="members">
      <thead>
        <tr>
          <th>author</th>
          <th>author id</th>
        </tr>
      </thead>
      <tbody>
        {cohort.members.map((m) => (
          <tr data-author={m.author_id ?? `@${m.handle}`}>
            <td>
              <AuthorLink handle={m.handle} />
            </td>
            <td>{m.author_id ?? 'never seen in a post'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Activity({ activity }: { activity: Cohort['collective_activity'] }) {
  return (
    <>
      <p>
        From {minute(activity.from)} to {minute(activity.to)}: {activity.mentions} token mentions by {activity.active_members} members, on {activity.token_count}{' '}
        tokens.
      </p>
      {activity.top_tokens.length > 0 && (
        <table class="top-tokens">
          <thead>
            <tr>
              <th>token</th>
              <th>mentions</th>
              <th>members</th>
            </tr>
          </thead>
          <tbody>
            {activity.top_tokens.map((t) => (
              <tr>
                <td>
                  <TokenLink token={t.token} />
                </td>
                <td class="num">{t.mentions}</td>
                <td class="num">{t.members}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function ConvergedTokens({ cohort }: { cohort: Cohort }) {
  return (
    <table class="converged-tokens">
      <thead>
        <tr>
          <th>token</th>
          <th>events listed</th>
          <th>last converged</th>
        </tr>
      </thead>
      <tbody>
        {cohort.tokens.map((t) => (
          <tr>
            <td>
              <TokenLink token={t.token} />
            </td>
            <td class="num">{t.convergence_events}</td>
            <td>{minute(t.last_converged_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ActiveSignals({ signals }: { signals: Schemas['Signal'][] }) {
  if (signals.length === 0) return <p>None.</p>;
  return (
    <ul class="active-signals">
      {signals.map((s) => (
        <li data-signal={s.id}>
          <TokenLink token={s.token} /> <a href={`#/signal/${s.id}`}>{s.label}</a> since {minute(s.fired_at)} (strength {s.strength.toFixed(0)})
        </li>
      ))}
    </ul>
  );
}

function CohortView({ session, id }: { session: Session; id: string }) {
  const { data: cohort, error } = useAnswer(
    () => apiFor(session.key).GET('/v1/quant/cohorts/{id}', { params: { path: { id } } }).then(unwrap),
    [session.key, id],
  );
  if (error !== null) return <ErrorBox error={error} />;
  if (cohort === null) return <p>Loading…</p>;
  return (
    <>
      <h1>
        {cohort.name}{' '}
        <small>
          {cohort.kind} · version {cohort.version} since {minute(cohort.updated_at)} · as of {minute(cohort.as_of)}
        </small>
      </h1>
      <p>{cohort.rule}</p>
      <h2>Members ({cohort.member_count})</h2>
      <Members cohort={cohort} />
      <h2>Their activity</h2>
      <Activity activity={cohort.collective_activity} />
      <h2>Convergence events</h2>
      <Convergence cohort={cohort} />
      {cohort.tokens.length > 0 && (
        <>
          <h2>Tokens converged on</h2>
          <ConvergedTokens cohort={cohort} />
          <h2>Signals active on them</h2>
          <ActiveSignals signals={cohort.active_signals} />
        </>
      )}
    </>
  );
}

export function CohortPage({ session, id }: { session: Session; id: string }) {
  return (
    <section>
      <NeedsScope session={session} scope="quant:read" what="cohorts">
        <CohortView session={session} id={id} />
      </NeedsScope>
    </section>
  );
}
