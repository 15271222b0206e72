import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A small disk of its own for a test that fills one: a tmpfs on a new directory (needs root, as CI runs). */
export interface TestDisk {
  dir: string;
  /** Grows (or shrinks) the disk in place, keeping what it holds; `size` as mount takes it (`4m`, `1g`). */
  resize(size: string): Promise<void>;
  /** Unmounts it (lazily, should a file still be open) and removes the directory. */
  remove(): Promise<void>;
}

export async function mountTmpfs(size: string): Promise<TestDisk> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-disk-'));
  await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  return {
    dir,
    resize: async (next) => void (await run('mount', ['-o', `remount,size=${next}`, dir])),
    remove: async () => {
      await run('umount', ['--lazy', dir]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
