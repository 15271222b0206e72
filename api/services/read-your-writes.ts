import { ApiError } from '../errors.ts';

/** How long a write waits for the projection to show its event (read-your-writes). */
const APPLY_TIMEOUT_MS = 10_000;

/**
 * Reads until the projection shows a write at `version` or newer, so the answer to a write is
 * what the next read returns; UPSTREAM_UNAVAILABLE (naming `what`) after APPLY_TIMEOUT_MS.
 */
export async function untilApplied<T extends { version: number }>(read: () => Promise<T | null>, version: number, what: string): Promise<T> {
  const deadline = Date.now() + APPLY_TIMEOUT_MS;
  for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
    const row = await read();
    if (row !== null && row.version >= version) return row;
    if (Date.now() > deadline) throw new ApiError('UPSTREAM_UNAVAILABLE', `${what} is recorded but not yet applied; retry the read shortly`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
