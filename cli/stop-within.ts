/** One step of a process's stop: a role's, or the release of what the roles shared. */
export interface StopStep {
  name: string;
  run(): Promise<void>;
}

/**
 * Runs the steps one after the other, for at most `deadlineMs`: null once every step is done,
 * or the name of the step still under way when the deadline passed (those after it never
 * began). A step that hangs, such as a client waiting on a broker that never answers, then
 * holds up the process no longer: what it did not save is redone on the next start, as after
 * a kill. A step that fails fails the stop, as before.
 */
export async function stopWithin(steps: readonly StopStep[], deadlineMs: number): Promise<string | null> {
  let current: string | null = null;
  const all = (async () => {
    for (const step of steps) {
      current = step.name;
      await step.run();
    }
    current = null;
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
  try {
    if ((await Promise.race([all.then(() => 'done' as const), late])) === 'done') return null;
    // Given up on: its later failure is no one's to handle.
    all.catch(() => undefined);
    return current;
  } finally {
    clearTimeout(timer);
  }
}
