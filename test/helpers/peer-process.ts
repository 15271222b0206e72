import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Installs a Debian package for a test peer (needs root). A fresh machine has no package
 * lists yet, so a failed install is retried once after apt-get update. RUNLEVEL=1 keeps a
 * package's init script from starting a system-wide service: the tests run their own.
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
