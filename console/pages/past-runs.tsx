import { useEffect, useState } from 'preact/hooks';
import { unwrap } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { minute, orMissing, percent } from '../format.tsx';
import { resultOf, rulesText } from '../research-values.ts';
import type { Session } from '../session-type.ts';

/** The key's backtest runs, newest first as the API lists them; Open shows one above, More reads the next page. */

type Run = Schemas['BacktestRun'];
const PAGE_SIZE = 25;

interface Listing {
  rows: Run[];
  next: string | null;
}

export function PastRuns({ session, reload, shown, onOpen }: { session: Session; reload: string; shown: string | null; onOpen: (run: Run) => void }) {
  const [listing, setListing] = useState<Listing | null>(null);
  const [error, setError] = useState<unknown>(null);
  const load = (cursor?: string) =>
    apiFor(session.key)
      .GET('/v1/quant/backtests', { params: { query: { limit: PAGE_SIZE, cursor } } })
      .then(unwrap);

  useEffect(() => {
    // A slower answer to an earlier reload must not replace a newer one.
    let current = true;
    load().then(
      (page) => current && setListing({ rows: page.data, next: page.next_cursor }),
      (err: unknown) => current && setError(err),
    );
    return () => {
      current = false;
    };
  }, [session.key, reload]);

  const more = (from: Listing) =>
    load(from.next!).then((page) => setListing((now) => (now === from ? { rows: [...from.rows, ...page.data], next: page.next_cursor } : now)), setError);

  if (error !== null) return <ErrorBox error={error} />;
  if (listing === null) return <p>Loading…</p>;
  if (listing.rows.length === 0) return <p>No runs yet.</p>;
  return (
    <>
      <table class="past-runs">
        <thead>
          <tr>
            <th>created</th>
            <th>run</th>
            <th>rules</th>
            <th>horizon</th>
            <th>status</th>
            <th>N</th>
            <th>hit rate</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {listing.rows.map((run) => {
            const result = resultOf(run);
            return (
              <tr data-run={run.id} data-status={run.status} class={run.id === shown ? 'shown' : ''}>
                <td>{minute(run.created_at)}</td>
                <td>{run.name ?? <code>{run.id}</code>}</td>
                <td>{rulesText(run.spec.rules)}</td>
                <td>{run.spec.horizon}</td>
                <td>{run.status}</td>
                <td class="num">{result?.n ?? '–'}</td>
                <td class="num">{orMissing(result?.hit_rate ?? null, percent)}</td>
                <td>
                  <button class="open" disabled={run.id === shown} onClick={() => onOpen(run)}>
                    Open
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {listing.next !== null && (
        <button class="more" onClick={() => more(listing)}>
          More
        </button>
      )}
    </>
  );
}
