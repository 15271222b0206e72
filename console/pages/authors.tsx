import { unwrap } from '../../client/index.ts';
import { apiFor } from '../api.ts';
import { ErrorBox } from '../error-box.tsx';
import { AuthorLink, hours, orMissing } from '../format.tsx';
import { NeedsScope } from '../needs-scope.tsx';
import type { Session } from '../session-type.ts';
import { useAnswer } from '../use-answer.ts';
import { Confidence, HitRate, ResearchScore, WilsonInterval, WHY_NULL, type AuthorMetrics } from './author-metrics.tsx';

/**
 * The authors' leaderboard. The API lists no authors of its own, so these are the members of
 * the cohorts the key sees, each with the track record GET /v1/quant/users/{handle} gives,
 * ranked by research score (the API's blend, already shrunk for small samples; unknown last).
 * That is a request per member, counted against the key's rate limit. Any other author opens
 * by handle.
 */

interface Entry {
  /** The author id, or `@handle` for a member never seen in a post. */
  id: string;
  handle: string;
  /** Names of the cohorts the author is in. */
  cohorts: string[];
  /** Null for a member never seen in a post, and when the request failed (`error`). */
  metrics: AuthorMetrics | null;
  error: unknown;
}

const rank = (e: Entry) => e.metrics?.research_score ?? -1;

async function leaderboard(key: string): Promise<Entry[]> {
  const api = apiFor(key);
  const members = new Map<string, Entry>();
  for (const cohort of unwrap(await api.GET('/v1/quant/cohorts')).data) {
    for (const m of cohort.members) {
      const id = m.author_id ?? `@${m.handle}`;
      const entry = members.get(id) ?? { id, handle: m.handle, cohorts: [], metrics: null, error: null };
      entry.cohorts.push(cohort.name);
      members.set(id, entry);
    }
  }
  const entries = await Promise.all(
    [...members.values()].map((e) =>
      e.id.startsWith('@')
        ? e
        : api.GET('/v1/quant/users/{handle}', { params: { path: { handle: e.handle } } }).then(
            (r) => ({ ...e, metrics: unwrap(r) }),
            (error: unknown) => ({ ...e, error }),
          ),
    ),
  );
  // A stable sort: equal scores keep the cohorts' order.
  return entries.sort((a, b) => rank(b) - rank(a));
}

function OpenByHandle() {
  const open = (event: Event) => {
    event.preventDefault();
    const handle = String(new FormData(event.target as HTMLFormElement).get('handle') ?? '').trim();
    location.hash = `#/author/${encodeURIComponent(handle)}`;
  };
  return (
    <form class="open-author controls" onSubmit={open}>
      <label>
        Author <input name="handle" placeholder="@handle" required />
      </label>
      <button type="submit">Open</button>
    </form>
  );
}

function Row({ entry, place }: { entry: Entry; place: number }) {
  const m = entry.metrics;
  return (
    <tr data-author={entry.id}>
      <td class="num">{place}</td>
      <td>
        <AuthorLink handle={entry.handle} />
      </td>
      <td>{entry.cohorts.join(', ')}</td>
      {m === null ? (
        <td colSpan={6}>{entry.error !== null ? <ErrorBox error={entry.error} /> : 'never seen in a post: no track record yet'}</td>
      ) : (
        <>
          <td class="num">
            {m.calls.resolved} of {m.calls.total}
          </td>
          <td class="num" data-field="hit-rate">
            <HitRate m={m} />
          </td>
          <td data-field="interval">
            <WilsonInterval m={m} />
          </td>
          <td class="num" data-field="research-score">
            <ResearchScore m={m} />
          </td>
          <td>
            <Confidence m={m} />
          </td>
          <td class="num">{orMissing(m.median_lead_time_ms, hours, WHY_NULL.leadTime)}</td>
        </>
      )}
    </tr>
  );
}

function Leaderboard({ session }: { session: Session }) {
  const { data: entries, error } = useAnswer(() => leaderboard(session.key), [session.key]);
  if (error !== null) return <ErrorBox error={error} />;
  if (entries === null) return <p>Loading…</p>;
  if (entries.length === 0) return <p>The cohorts this key sees have no members.</p>;
  return (
    <table class="authors">
      <thead>
        <tr>
          <th>#</th>
          <th>author</th>
          <th>cohorts</th>
          <th>resolved calls</th>
          <th>hit rate</th>
          <th>95% Wilson interval</th>
          <th>research score</th>
          <th>confidence</th>
          <th>median lead time</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry, i) => (
          <Row entry={entry} place={i + 1} />
        ))}
      </tbody>
    </table>
  );
}

export function AuthorsPage({ session }: { session: Session }) {
  return (
    <section>
      <h1>Authors</h1>
      <NeedsScope session={session} scope="quant:read" what="authors">
        <OpenByHandle />
        <p>The members of the cohorts this key sees, by research score. Track records count calls and their outcomes, never followers.</p>
        <Leaderboard session={session} />
      </NeedsScope>
    </section>
  );
}
