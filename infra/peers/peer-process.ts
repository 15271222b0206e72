import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Installs a Debian package for a peer (needs root). A fresh machine has no package
 * lists yet, so a failed install is retried once after apt-get update. RUNLEVEL=1 keeps a
 * package's init script from starting a system-wide service: we run our own.
 */
export async function aptInstall(pkg: string): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error(`${pkg} is missing and installing it needs root: apt-get install -y ${pkg}`);
  const options = { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', RUNLEVEL: '1' }, maxBuffer: 64 * 1024 * 1024 };
  const install = () => run('apt-get', ['install', '-y', '--no-install-recommends', pkg], options);
  try {
    await install();
  } catch {
    await run('apt-get', ['update'], options);
    await install();
  }
}

/** Signals the process group a peer was started in (`detached: true`); a gone group is fine. */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

export interface PeerStopOptions {
  /** Sent to the group should this process exit without stopping the peer. */
  onExit: NodeJS.Signals;
  /** Sent to the group this long after stop() closed the guard's stdin, if it is still running by then. */
  escalate: { signal: NodeJS.Signals; afterMs: number };
  /** Runs once the peer is gone (e.g. removes its directory). */
  cleanup?: () => Promise<void>;
}

/**
 * The stop of a peer started in its own process group (`detached: true`) behind a shell
 * guard that takes the peer down when this process's end of its stdin pipe closes. stop()
 * closes the pipe, escalates to a signal if the peer lingers, waits for the guard to exit
 * and cleans up; calling it again returns the same promise.
 */
export function peerStop(child: ChildProcess, { onExit, escalate, cleanup }: PeerStopOptions): () => Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const killOnExit = (): void => signalGroup(child, onExit);
  process.once('exit', killOnExit);
  let stopped: Promise<void> | undefined;
  return () =>
    (stopped ??= (async () => {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.stdin?.end();
        const timer = setTimeout(() => signalGroup(child, escalate.signal), escalate.afterMs);
        await exited;
        clearTimeout(timer);
      }
      await cleanup?.();
    })());
}
