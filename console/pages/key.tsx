import { useEffect, useState } from 'preact/hooks';
import { apiFor } from '../api.ts';
import type { Session } from '../session-type.ts';

/** The key: its plan, scopes, the plan's limits and the requests left in this window. */
export function KeyPage({ session }: { session: Session }) {
  const { info } = session;
  const [remaining, setRemaining] = useState<string | null>(null);
  useEffect(() => {
    apiFor(session.key)
      .GET('/v1/key')
      .then((r) => setRemaining(r.response.headers.get('ratelimit-remaining')));
  }, [session.key]);
  const f = info.plan_limits.features;
  return (
    <section>
      <h1>Key</h1>
      <dl class="key">
        <dt>name</dt>
        <dd>{info.name}</dd>
        <dt>id</dt>
        <dd>{info.id}</dd>
        <dt>plan</dt>
        <dd data-field="plan">{info.plan}</dd>
        <dt>scopes</dt>
        <dd data-field="scopes">{info.scopes.join(', ')}</dd>
        <dt>requests</dt>
        <dd>
          {remaining ?? '…'} of {info.rate_limit.limit} left in this {info.rate_limit.window_seconds}-second window
        </dd>
        <dt>backtests</dt>
        <dd>{f.backtests ? `${f.concurrent_backtests} queued or running at once` : 'not on this plan'}</dd>
        <dt>scanner</dt>
        <dd>{f.scanner_delay_minutes === 0 ? 'live' : `${f.scanner_delay_minutes} minutes behind`}</dd>
        <dt>webhooks</dt>
        <dd>at most {f.webhooks}</dd>
        <dt>token history</dt>
        <dd>{f.history_days === null ? 'all of it' : `${f.history_days} days back`}</dd>
      </dl>
    </section>
  );
}
