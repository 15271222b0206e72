import { useEffect, useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { score, TokenLink } from '../format.tsx';
import type { Session } from '../session-type.ts';

/** One signal: its fields, why it fired, the scores then, how it ended, and the earlier firings of its rule on its token. */

export function SignalPage({ session, id }: { session: Session; id: string }) {
  const [signal, setSignal] = useState<Schemas['SignalDetail'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setSignal(null);
    setError(null);
    apiFor(session.key)
      .GET('/v1/quant/signals/{id}', { params: { path: { id } } })
      .then((r) => setSignal(unwrap(r)), setError);
  }, [session.key, id]);
  if (error !== null) return <ErrorBox error={error} />;
  if (signal === null) return <p>Loading…</p>;
  const prior = signal.prior_firings;
  return (
    <section>
      <h1>
        {signal.label} <small>{signal.id}</small>
      </h1>
      <dl class="signal">
        <dt>token</dt>
        <dd>
          <TokenLink token={signal.token} />
        </dd>
        <dt>type</dt>
        <dd>{signal.type}</dd>
        <dt>rule</dt>
        <dd>{signal.rule_version}</dd>
        <dt>status</dt>
        <dd data-field="status">{signal.status}</dd>
        <dt>fired</dt>
        <dd>{signal.fired_at}</dd>
        {signal.ended_at !== null && (
          <>
            <dt>ended</dt>
            <dd data-field="ended">
              {signal.ended_at} ({signal.end_reason})
            </dd>
          </>
        )}
        <dt>strength</dt>
        <dd>{signal.strength.toFixed(0)}</dd>
      </dl>
      <h2>Why</h2>
      <ul class="why">
        {signal.why.map((line) => (
          <li>{line}</li>
        ))}
      </ul>
      <h2>Scores at firing</h2>
      <table class="scores">
        <tbody>
          {Object.entries(signal.scores).map(([name, value]) => (
            <tr data-score={name}>
              <th>{name}</th>
              <td class="num">{score(value)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Prior firings</h2>
      <p>
        {prior.count} earlier firings of its rule on this token{prior.data.length < prior.count && `, ${prior.data.length} of them listed`}.
      </p>
      {prior.data.length > 0 && (
        <table class="prior-firings">
          <thead>
            <tr>
              <th>fired</th>
              <th>status</th>
              <th>ended</th>
              <th>strength</th>
            </tr>
          </thead>
          <tbody>
            {prior.data.map((p) => (
              <tr data-signal={p.id}>
                <td>
                  <a href={`#/signal/${p.id}`}>{p.fired_at}</a>
                </td>
                <td>{p.status}</td>
                <td>{p.ended_at === null ? '' : `${p.ended_at} (${p.end_reason})`}</td>
                <td class="num">{p.strength.toFixed(0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="disclaimer">{signal.disclaimer}</p>
    </section>
  );
}
