import { useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, hasScope, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import type { Session } from '../session-type.ts';

/** A backtest: the form, its progress while it runs, and the numbers of its result. */

type Run = Schemas['BacktestRun'];
const HORIZONS = ['15m', '1h', '6h', '24h', '3d', '7d'] as const;
const POLL_MS = 500;

/** Why this key may not start a backtest, or null when it may. */
function refusal(session: Session): string | null {
  if (!hasScope(session.info, 'research:write')) return 'This key lacks the scope research:write: it can read runs but not start one.';
  if (!session.info.plan_limits.features.backtests) return `Backtests are not on the ${session.info.plan} plan.`;
  return null;
}

export function ResearchPage({ session }: { session: Session }) {
  const [run, setRun] = useState<Run | null>(null);
  const [error, setError] = useState<unknown>(null);
  const refused = refusal(session);

  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.target as HTMLFormElement);
    const api = apiFor(session.key);
    setError(null);
    try {
      let current = unwrap(
        await api.POST('/v1/quant/backtests', {
          body: {
            rules: [{ field: String(form.get('field')) as never, op: String(form.get('op')) as '>=', value: Number(form.get('value')) }],
            horizon: String(form.get('horizon')) as (typeof HORIZONS)[number],
          },
        }),
      );
      setRun(current);
      while (current.status === 'queued' || current.status === 'running') {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        current = unwrap(await api.GET('/v1/quant/backtests/{id}', { params: { path: { id: current.id } } }));
        setRun(current);
      }
    } catch (err) {
      setError(err);
    }
  };

  const numbers = run?.result ? Object.entries(run.result).filter((entry): entry is [string, number] => typeof entry[1] === 'number') : [];
  return (
    <section>
      <h1>Research</h1>
      <form class="backtest" onSubmit={submit}>
        <fieldset disabled={refused !== null}>
          <legend>Backtest: enter when</legend>
          <input name="field" defaultValue="momentum" aria-label="rule field" />
          <select name="op" aria-label="operator">
            {['>=', '>', '<=', '<'].map((op) => (
              <option value={op}>{op}</option>
            ))}
          </select>
          <input name="value" type="number" step="any" defaultValue="60" aria-label="value" />
          <label>
            horizon{' '}
            <select name="horizon" defaultValue="24h">
              {HORIZONS.map((h) => (
                <option value={h}>{h}</option>
              ))}
            </select>
          </label>
          <button type="submit">Run</button>
        </fieldset>
        {refused !== null && <p class="refused">{refused}</p>}
      </form>
      {error !== null && <ErrorBox error={error} />}
      {run !== null && (
        <div class="run" data-run={run.id} data-status={run.status}>
          <p>
            Run {run.id}: {run.status}
            {run.progress !== null && ` (${Math.round(run.progress.fraction * 100)}% scanned)`}
            {run.reason !== null && ` (${run.reason})`}
          </p>
          {numbers.length > 0 && (
            <table class="result">
              <tbody>
                {numbers.map(([name, value]) => (
                  <tr data-field={name}>
                    <th>{name}</th>
                    <td class="num">{value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </section>
  );
}
