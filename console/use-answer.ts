import { useEffect, useState } from 'preact/hooks';

/** What a page shows while it asks the API: nothing yet, the answer, or the error. */
export interface Answer<T> {
  data: T | null;
  error: unknown;
}

/**
 * The answer of `ask` for the current `deps` (strings and numbers). An answer is kept with
 * the deps it was asked for, so the one for deps left behind never shows as the current one:
 * not in the render before the new request, nor when it arrives late.
 */
export function useAnswer<T>(ask: () => Promise<T>, deps: readonly (string | number)[]): Answer<T> {
  const asked = JSON.stringify(deps);
  const [answer, setAnswer] = useState<Answer<T> & { asked: string | null }>({ asked: null, data: null, error: null });
  useEffect(() => {
    let current = true;
    ask().then(
      (data) => current && setAnswer({ asked, data, error: null }),
      (error: unknown) => current && setAnswer({ asked, data: null, error }),
    );
    return () => {
      current = false;
    };
  }, [asked]);
  return answer.asked === asked ? answer : { data: null, error: null };
}
