import { useEffect, useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { orMissing, percent, score } from '../format.tsx';
import { HistoryChart } from '../history-chart.tsx';
import type { Session } from '../session-type.ts';

/** One token: the snapshot's scores with their drivers, the history chart, active signals and analogs. */

export function TokenPage({ session, token }: { session: Session; token: string }) {
  const [snapshot, setSnapshot] = useState<Schemas['TokenSnapshot'] | null>(null);
  const [history, setHistory] = useState<Schemas['TokenHistoryPoint'][] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const api = apiFor(session.key);
    const path = { token };
    api.GET('/v1/quant/token/{token}', { params: { path } }).then((r) => setSnapshot(unwrap(r)), setError);
    api.GET('/v1/quant/token/{token}/history', { params: { path, query: { step: '1h' } } }).then((r) => setHistory(unwrap(r).data), setError);
  }, [session.key, token]);
  if (error !== null) return <ErrorBox error={error} />;
  if (snapshot === null) return <p>Loading…</p>;
  return (
    <section>
      <h1>
        {snapshot.token.symbol} <small>{snapshot.token.name} · {snapshot.token.chain} · snapshot {snapshot.ts}</small>
      </h1>
      <h2>History (1h)</h2>
      {history !== null && <HistoryChart points={history} />}
      <h2>Scores and their drivers</h2>
      <table class="drivers">
        <thead>
          <tr>
            <th>score</th>
            <th>value</th>
            <th>confidence</th>
            <th>drivers (points)</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>
          {snapshot.score_details.map((d) => (
            <tr data-score={d.score}>
              <td>{d.score}</td>
              <td class="num">{score(d.value)}</td>
              <td>{d.confidence}</td>
              <td>{d.drivers.map((x) => `${x.name} ${x.contribution >= 0 ? '+' : ''}${x.contribution.toFixed(1)}`).join(', ')}</td>
              <td>{d.reason ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Active signals</h2>
      {snapshot.active_signals.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul>
          {snapshot.active_signals.map((s) => (
            <li>
              {s.type} since {s.fired_at} (strength {s.strength.toFixed(0)})
            </li>
          ))}
        </ul>
      )}
      <h2>Analogs</h2>
      <p>
        {snapshot.analogs.n} analogs, median 24 h return {orMissing(snapshot.analogs.median_24h, percent)}, worst drawdown {orMissing(snapshot.analogs.worst_drawdown_24h, percent)}, positive{' '}
        {orMissing(snapshot.analogs.positive_share, percent)}, confidence {snapshot.analogs.confidence}.
      </p>
    </section>
  );
}
