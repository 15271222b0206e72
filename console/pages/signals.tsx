import { useEffect, useState } from 'preact/hooks';
import { unwrap, type operations } from '../../client/index.ts';
import { apiFor, type Schemas } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { minute, TokenLink } from '../format.tsx';
import type { Session } from '../session-type.ts';
import { CHAINS } from './tokens.tsx';

/**
 * The signal feed, newest first. Its filters live in the fragment's query under the API's own
 * parameter names (`#/signals?status=ended&signal_type=COOLING`), so a filtered view is a link;
 * More reads the next page with the feed's cursor.
 */

type Signal = Schemas['Signal'];
type FeedQuery = NonNullable<operations['listSignals']['parameters']['query']>;
const FILTERS = ['status', 'signal_type', 'chain', 'token'] as const;
// Every signal type: the compiler checks this against the API's list, both ways.
const TYPES = Object.keys({
  EARLY_ACCELERATION: 1,
  BROAD_ATTENTION: 1,
  VELOCITY_3X: 1,
  HQ_AUTHORS_CONVERGE: 1,
  SOCIAL_UP_PRICE_FLAT: 1,
  CROWDING_SPIKE: 1,
  COOLING: 1,
} satisfies Record<Signal['type'], 1>);
const PAGE_SIZE = 50;

/** The filters of a fragment query, in one order and without empty ones: one view, one link. */
function filtersOf(query: string): URLSearchParams {
  const given = new URLSearchParams(query);
  return new URLSearchParams(
    FILTERS.flatMap((name) => {
      const value = given.get(name)?.trim() ?? '';
      return value === '' ? [] : [[name, value]];
    }),
  );
}

interface Feed {
  /** The filters these rows are for. */
  query: string;
  rows: Signal[];
  next: string | null;
}

export function SignalsPage({ session, query }: { session: Session; query: string }) {
  const filters = filtersOf(query);
  const shown = filters.toString();
  const [feed, setFeed] = useState<Feed | null>(null);
  const [error, setError] = useState<unknown>(null);
  // The server checks the values; a wrong one in a link answers with its VALIDATION error.
  const load = (cursor?: string) =>
    apiFor(session.key)
      .GET('/v1/quant/signals', { params: { query: { ...(Object.fromEntries(filters) as FeedQuery), limit: PAGE_SIZE, cursor } } })
      .then(unwrap);

  useEffect(() => {
    // A slower answer for filters left behind must not replace the current one.
    let current = true;
    setError(null);
    load().then(
      (page) => current && setFeed({ query: shown, rows: page.data, next: page.next_cursor }),
      (err: unknown) => current && setError(err),
    );
    return () => {
      current = false;
    };
  }, [session.key, shown]);

  const more = (from: Feed) =>
    load(from.next!).then(
      // Applied only to the rows it continues: not twice, nor to rows of other filters.
      (page) => setFeed((now) => (now === from ? { ...from, rows: [...from.rows, ...page.data], next: page.next_cursor } : now)),
      setError,
    );

  /** A control's value goes into the fragment; the page follows the fragment. */
  const filter = (name: (typeof FILTERS)[number]) => (event: Event) => {
    const next = new URLSearchParams(filters);
    next.set(name, (event.target as HTMLInputElement | HTMLSelectElement).value);
    const q = filtersOf(next.toString()).toString();
    location.hash = q === '' ? '#/signals' : `#/signals?${q}`;
  };

  const select = (name: (typeof FILTERS)[number], all: string, values: readonly string[]) => (
    <select name={name} value={filters.get(name) ?? ''} onChange={filter(name)}>
      <option value="">{all}</option>
      {values.map((v) => (
        <option value={v}>{v}</option>
      ))}
    </select>
  );

  return (
    <section>
      <h1>Signals</h1>
      <div class="controls">
        <label>Status {select('status', 'all', ['active', 'ended'])}</label>
        <label>Type {select('signal_type', 'all', TYPES)}</label>
        <label>Chain {select('chain', 'all', CHAINS)}</label>
        <label>
          Token <input name="token" value={filters.get('token') ?? ''} placeholder="$SYMBOL or tk_…" onChange={filter('token')} />
        </label>
      </div>
      {error !== null && <ErrorBox error={error} />}
      {error === null && feed?.query !== shown && <p>Loading…</p>}
      {feed?.query === shown && (
        <>
          <table class="signals" data-query={feed.query}>
            <thead>
              <tr>
                <th>fired</th>
                <th>token</th>
                <th>signal</th>
                <th>status</th>
                <th>strength</th>
              </tr>
            </thead>
            <tbody>
              {feed.rows.map((s) => (
                <tr data-signal={s.id}>
                  <td>{minute(s.fired_at)}</td>
                  <td>
                    <TokenLink token={s.token} />
                  </td>
                  <td>
                    <a href={`#/signal/${s.id}`}>{s.label}</a> <small>{s.type}</small>
                  </td>
                  <td>{s.status}</td>
                  <td class="num">{s.strength.toFixed(0)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {feed.rows.length === 0 && <p>No signals.</p>}
          {feed.next !== null && (
            <button class="more" onClick={() => more(feed)}>
              More
            </button>
          )}
        </>
      )}
    </section>
  );
}
