import 'uplot/dist/uPlot.min.css';
import './console.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { apiFor, describeError, type KeyInfo } from './api.ts';
import { unwrap } from '../client/index.ts';
import { ErrorBox } from './error-box.tsx';
import { KeyPage } from './pages/key.tsx';
import { ResearchPage } from './pages/research.tsx';
import { SignalPage } from './pages/signal.tsx';
import { SignalsPage } from './pages/signals.tsx';
import { TokenPage } from './pages/token.tsx';
import { TokensPage } from './pages/tokens.tsx';
import { WebhooksPage } from './pages/webhooks.tsx';
import { forgetKey, keepKey, keyFromFragment, storedKey } from './session.ts';

/** The console: sign-in, then pages chosen by the URL fragment (`#/tokens`, `#/token/<id>`, `#/signals?status=ended`, …). */

const PAGES = [
  ['tokens', 'Tokens'],
  ['signals', 'Signals'],
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
  useEffect(() => {
    const key = storedKey();
    if (key === null) return;
    apiFor(key)
      .GET('/v1/key')
      .then((result) => setSession({ key, info: unwrap(result) }))
      .catch((err: unknown) => {
        forgetKey();
        setFailure(err);
      });
  }, []);
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
        {page === 'research' && <ResearchPage session={session} />}
        {page === 'webhooks' && <WebhooksPage session={session} />}
        {page === 'key' && <KeyPage session={session} />}
      </main>
    </>
  );
}

keyFromFragment();
render(<App />, document.getElementById('app')!);
