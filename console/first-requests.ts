/**
 * The requests a page load waits on, started by the head script (start.ts) while the
 * console's script still loads and runs: the check of the kept key and, when the page opens
 * on the tokens, their first rows. Run one after the other by the app, they made the first
 * rows wait for the script and then for two round trips. The app takes each answer once;
 * anything later is fetched afresh.
 */

/** The tokens page's first view: its sort, and its rows per page. */
export const FIRST_TOKENS = { sort: 'momentum', limit: 100 } as const;

export const KEY_PATH = '/v1/key';
export const FIRST_TOKENS_PATH = `/v1/quant/tokens?${new URLSearchParams({ sort: FIRST_TOKENS.sort, limit: String(FIRST_TOKENS.limit) })}`;

/** An answer as the typed client gives it, for `unwrap`. */
export interface FirstResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

interface Started {
  key: string;
  answers: Map<string, Promise<FirstResult<unknown>>>;
}

// The head script and the console are separate scripts: the page's global is what they share.
const global = globalThis as { firstRequests?: Started };

export function startFirstRequests(key: string, onTokensPage: boolean): void {
  // Read as soon as it arrives, while the console's script may still be loading or running.
  const get = async (path: string): Promise<FirstResult<unknown>> => {
    const response = await fetch(path, { headers: { Authorization: `Bearer ${key}` } });
    const body: unknown = await response.json();
    return response.ok ? { data: body, response } : { error: body, response };
  };
  const answers = new Map<string, Promise<FirstResult<unknown>>>();
  // The rows first: they take the API longer than the key's check.
  if (onTokensPage) answers.set(FIRST_TOKENS_PATH, get(FIRST_TOKENS_PATH));
  answers.set(KEY_PATH, get(KEY_PATH));
  // A failed fetch is the taker's to report; until taken it must not count as unhandled.
  for (const answer of answers.values()) answer.catch(() => {});
  global.firstRequests = { key, answers };
}

/** The answer the head script got for `path` with this key, once; null when it asked for none. */
export function takeFirstRequest<T>(key: string, path: string): Promise<FirstResult<T>> | null {
  const started = global.firstRequests;
  const answer = started?.key === key ? started.answers.get(path) : undefined;
  if (answer === undefined) return null;
  started!.answers.delete(path);
  return answer as Promise<FirstResult<T>>;
}
