/**
 * Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`;
 * the pause between polls doubles from 5 ms up to `maxDelayMs`.
 */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
  maxDelayMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let delay = 5; ; delay = Math.min(delay * 2, maxDelayMs)) {
    const result = await check();
    if (result !== undefined && result !== false) return result;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * Whether `work` resolves within `ms`: false once `ms` has passed first (the work goes on, and
 * its outcome is the caller's to observe); a rejection within `ms` rejects. The timer holds no
 * process open.
 */
export async function resolvesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms).unref();
  });
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
