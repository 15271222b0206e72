import { useEffect, useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, hasScope, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { NeedsScope } from '../needs-scope.tsx';
import type { Session } from '../session-type.ts';
import { BacktestForm } from './backtest-form.tsx';
import { RunView } from './backtest-result.tsx';
import { EventStudyList } from './event-studies.tsx';
import { PastRuns } from './past-runs.tsx';

/** Research: the backtest form, the run it queued (or a past one) followed until it ends, past runs and the event studies. */

type Run = Schemas['BacktestRun'];
const POLL_MS = 500;
const UNFINISHED: readonly Run['status'][] = ['queued', 'running'];

/** Why this key may not start a backtest, or null when it may. */
function refusal(session: Session): string | null {
  if (!hasScope(session.info, 'research:write')) return 'This key lacks the scope research:write: it can read runs but not start one.';
  if (!session.info.plan_limits.features.backtests) return `Backtests are not on the ${session.info.plan} plan.`;
  return null;
}

export function ResearchPage({ session }: { session: Session }) {
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<unknown>(null);

  // The shown run is read again until it ends; leaving the page or opening another run stops it.
  useEffect(() => {
    if (run === null || !UNFINISHED.includes(run.status)) return;
    const timer = setTimeout(
      () =>
        apiFor(session.key)
          .GET('/v1/quant/backtests/{id}', { params: { path: { id: run.id } } })
          .then(unwrap)
          .then((next) => setRun((now) => (now?.id === next.id ? next : now)), setError),
      POLL_MS,
    );
    return () => clearTimeout(timer);
  }, [session.key, run]);

  const open = (next: Run) => {
    setError(null);
    setRun(next);
  };
  return (
    <section class="research">
      <h1>Research</h1>
      <BacktestForm session={session} refused={refusal(session)} onQueued={open} />
      {error !== null && <ErrorBox error={error} />}
      {run !== null && <RunView run={run} />}
      <h2>Past runs</h2>
      {/* Listed again whenever the shown run changes status, so a new run and its end show here too. */}
      <NeedsScope session={session} scope="research:read" what="backtest runs">
        <PastRuns session={session} reload={`${run?.id}:${run?.status}`} shown={run?.id ?? null} onOpen={open} />
      </NeedsScope>
      <h2>Event studies</h2>
      <NeedsScope session={session} scope="research:read" what="event studies">
        <EventStudyList session={session} />
      </NeedsScope>
    </section>
  );
}
