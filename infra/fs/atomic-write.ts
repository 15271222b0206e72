import { link, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Replaces a file so that a crash leaves either the old or the new content, never a mix.
 * `durable: false` skips the syncs: after a power cut the old content may come back, which
 * is fine for state that only saves work (consumer offsets: the records come again).
 */
export async function writeFileAtomic(path: string, data: string | Buffer, { durable = true } = {}): Promise<void> {
  const tmp = await writeTemporary(path, data, { durable });
  await rename(tmp, path);
  if (durable) await syncDirectory(path);
}

/**
 * Creates a file with all its content at once, or fails with EEXIST if it exists: a reader
 * never finds it empty or part-written (as between the create and the write of writeFile
 * with `wx`), and an existing file is never replaced.
 */
export async function createFileAtomic(path: string, data: string | Buffer, { mode = 0o666 } = {}): Promise<void> {
  const tmp = await writeTemporary(path, data, { durable: true, mode });
  try {
    // A hard link, unlike a rename, refuses to replace what is there.
    await link(tmp, path);
  } finally {
    await rm(tmp, { force: true });
  }
  await syncDirectory(path);
}

/** `data` in a file of this process beside `path`, synced unless `durable` is false; its path. */
async function writeTemporary(path: string, data: string | Buffer, { durable = true, mode = 0o666 } = {}): Promise<string> {
  const tmp = `${path}.${process.pid}.tmp`;
  const file = await open(tmp, 'w', mode);
  try {
    await file.writeFile(data);
    if (durable) await file.datasync();
  } finally {
    await file.close();
  }
  return tmp;
}

async function syncDirectory(path: string): Promise<void> {
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
