import { unwrap } from '../../client/index.ts';
import { apiFor } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { hours, minute, orMissing, percent, points } from '../format.tsx';
import { NeedsScope } from '../needs-scope.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';
import { Confidence, HitRate, ResearchScore, WilsonInterval, WHY_NULL, type AuthorMetrics } from './author-metrics.tsx';

/** One author's point-in-time track record: their calls, the rates over them and their strength per narrative. */

function Sectors({ m }: { m: AuthorMetrics }) {
  if (m.sector_strength.length === 0) return <p>None yet: a narrative counts from 8 resolved calls in it.</p>;
  return (
    <table class="sectors">
      <thead>
        <tr>
          <th>narrative</th>
          <th>resolved calls</th>
          <th>hit rate</th>
          <th>against overall</th>
          <th>median 24 h return</th>
        </tr>
      </thead>
      <tbody>
        {m.sector_strength.map((s) => (
          <tr data-narrative={s.narrative}>
            <td>
              <a href={`#/narrative/${s.narrative}`}>{s.narrative}</a>
            </td>
            <td class="num">{s.samples}</td>
            <td class="num">{percent(s.hit_rate)}</td>
            <td class="num">{points(s.relative_hit_rate)}</td>
            <td class="num">{orMissing(s.median_return_24h, percent, 'no call with a 24 h return')}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Metrics({ m }: { m: AuthorMetrics }) {
  return (
    <>
      <h1>
        @{m.handle}{' '}
        <small>
          {m.author_id} · as of {minute(m.as_of)} · {m.model_version}
        </small>
      </h1>
      <dl class="author">
        <dt>calls</dt>
        <dd data-field="calls">
          {m.calls.total} made, {m.calls.unpriced} without a price, {m.calls.resolved} resolved, {m.calls.hits} hits (+10% in 24 h)
        </dd>
        <dt>hit rate</dt>
        <dd data-field="hit-rate">
          <HitRate m={m} />
        </dd>
        <dt>95% Wilson interval</dt>
        <dd data-field="interval">
          <WilsonInterval m={m} />
        </dd>
        <dt>research score</dt>
        <dd data-field="research-score">
          <ResearchScore m={m} />
        </dd>
        <dt>confidence</dt>
        <dd>
          <Confidence m={m} />
        </dd>
        <dt>median lead time</dt>
        <dd>
          {orMissing(m.median_lead_time_ms, hours, WHY_NULL.leadTime)} ({m.lead_time_samples} calls drew a crowd)
        </dd>
        <dt>false-positive rate</dt>
        <dd>{orMissing(m.false_positive_rate, percent, WHY_NULL.noResolvedCall)}</dd>
        <dt>median 24 h return</dt>
        <dd>{orMissing(m.median_return_24h, percent, WHY_NULL.noResolvedCall)}</dd>
        <dt>median drawdown in 24 h</dt>
        <dd>{orMissing(m.median_max_drawdown_24h, percent, WHY_NULL.drawdown)}</dd>
        <dt>outcome volatility</dt>
        <dd>{orMissing(m.outcome_volatility, percent, WHY_NULL.volatility)}</dd>
        <dt>consistency</dt>
        <dd>
          {orMissing(m.consistency, percent, WHY_NULL.consistency)} ({m.active_weeks} active weeks)
        </dd>
      </dl>
      <h2>Strength by narrative</h2>
      <Sectors m={m} />
    </>
  );
}

function Author({ session, handle }: { session: Session; handle: string }) {
  const { data, error } = useAnswer(
    () => apiFor(session.key).GET('/v1/quant/users/{handle}', { params: { path: { handle } } }).then(unwrap),
    [session.key, handle],
  );
  if (error !== null) return <ErrorBox error={error} />;
  if (data === null) return <p>Loading…</p>;
  return <Metrics m={data} />;
}

export function AuthorPage({ session, handle }: { session: Session; handle: string }) {
  return (
    <section>
      <NeedsScope session={session} scope="quant:read" what="authors">
        <Author session={session} handle={handle} />
      </NeedsScope>
    </section>
  );
}
