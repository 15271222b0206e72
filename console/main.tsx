import 'uplot/dist/uPlot.min.css';
import './console.css';
import { render } from 'preact';
import { useEffect, useLayoutEffect, useState } from 'preact/hooks';
import { apiFor, describeError, type KeyInfo } from './api.ts';
import { unwrap } from '../client/index.ts';
import { ErrorBox } from './error-box.tsx';
import { AuthorPage } from './pages/author.tsx';
import { AuthorsPage } from './pages/authors.tsx';
import { CohortPage } from './pages/cohort.tsx';
import { CohortsPage } from './pages/cohorts.tsx';
import { EventStudyPage } from './pages/event-studies.tsx';
import { KeyPage } from './pages/key.tsx';
import { NarrativePage } from './pages/narrative.tsx';
import { NarrativesPage } from './pages/narratives.tsx';
import { ResearchPage } from './pages/research.tsx';
import { SignalPage } from './pages/signal.tsx';
import { SignalsPage } from './pages/signals.tsx';
import { TokenPage } from './pages/token.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { KEY_PATH, takeFirstRequest, type FirstResult } from './first-requests.ts';
import { forgetKey, keepKey, storedKey } from './session.ts';

/** The console: sign-in, then pages chosen by the URL fragment (`#/tokens`, `#/token/<id>`, `#/signals?status=ended`, …). */

const PAGES = [
  ['tokens', 'Tokens'],
  ['signals', 'Signals'],
  ['authors', 'Authors'],
  ['cohorts', 'Cohorts'],
  ['narratives', 'Narratives'],
  ['research', 'Research'],
  ['webhooks', 'Webhooks'],
  ['key', 'Key'],
] as const;

/** The fragment's path segments, and its query (`#/signals?status=ended`: a page's state that a link keeps). */
function useRoute(): { path: string[]; query: string } {
  const read = () => {
    const [path, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
    return { path: path.split('/').filter(Boolean), query };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function SignIn({ onSignedIn }: { onSignedIn: (key: string, info: KeyInfo) => void }) {
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    const key = String(new FormData(event.target as HTMLFormElement).get('key') ?? '').trim();
    try {
      onSignedIn(key, unwrap(await apiFor(key).GET('/v1/key')));
    } catch (err) {
      setError(err);
    }
  };
  return (
    <form class="sign-in" onSubmit={submit}>
      <h1>Token quant analytics</h1>
      <label>
        API key <input name="key" type="password" autocomplete="off" placeholder="svc_live_…" required />
      </label>
      <button type="submit">Sign in</button>
      {error !== null && <ErrorBox error={error} />}
    </form>
  );
}

function App() {
  const [session, setSession] = useState<{ key: string; info: KeyInfo } | null>(null);
  const [failure, setFailure] = useState<unknown>(null);
  const route = useRoute();
  // At once, not after the first paint: the head script (start.ts) took the key from the
  // fragment and began its check, which has often been answered by now.
  useLayoutEffect(() => {
    const key = storedKey();
    if (key === null) return;
    const check: Promise<FirstResult<KeyInfo>> = takeFirstRequest<KeyInfo>(key, KEY_PATH) ?? apiFor(key).GET('/v1/key');
    check
      .then((result) => setSession({ key, info: unwrap(result) }))
      .catch((err: unknown) => {
        forgetKey();
        setFailure(err);
      });
  }, []);
  // While a kept key is checked, no form: it would only flash, and its layout holds up the first page.
  if (session === null && storedKey() !== null) return <p class="notice">Signing in…</p>;
  if (session === null) {
    return (
      <>
        {failure !== null && <p class="notice">Signed out: {describeError(failure).message}</p>}
        <SignIn
          onSignedIn={(key, info) => {
            keepKey(key);
            setSession({ key, info });
            if (location.hash === '') location.hash = '#/tokens';
          }}
        />
      </>
    );
  }
  const [page = 'tokens', arg] = route.path;
  const signOut = () => {
    forgetKey();
    setSession(null);
  };
  return (
    <>
      <nav>
        {PAGES.map(([id, label]) => (
          <a href={`#/${id}`} class={page === id ? 'active' : ''}>
            {label}
          </a>
        ))}
        <span class="who">
          {session.info.name} ({session.info.plan}) <button onClick={signOut}>Sign out</button>
        </span>
      </nav>
      <main>
        {page === 'tokens' && <TokensPage session={session} />}
        {page === 'token' && arg !== undefined && <TokenPage session={session} token={decodeURIComponent(arg)} />}
        {page === 'signals' && <SignalsPage session={session} query={route.query} />}
        {page === 'signal' && arg !== undefined && <SignalPage session={session} id={decodeURIComponent(arg)} />}
        {page === 'authors' && <AuthorsPage session={session} />}
        {page === 'author' && arg !== undefined && <AuthorPage session={session} handle={decodeURIComponent(arg)} />}
        {page === 'cohorts' && <CohortsPage session={session} query={route.query} />}
        {page === 'cohort' && arg !== undefined && <CohortPage session={session} id={decodeURIComponent(arg)} />}
        {page === 'narratives' && <NarrativesPage session={session} query={route.query} />}
        {page === 'narrative' && arg !== undefined && <NarrativePage session={session} slug={decodeURIComponent(arg)} />}
        {page === 'research' && <ResearchPage session={session} />}
        {page === 'study' && arg !== undefined && <EventStudyPage session={session} slug={decodeURIComponent(arg)} />}
        {page === 'webhooks' && <WebhooksPage session={session} />}
        {page === 'key' && <KeyPage session={session} />}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
