import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Replaces a file so that a crash leaves either the old or the new content, never a mix.
 * `durable: false` skips the syncs: after a power cut the old content may come back, which
 * is fine for state that only saves work (consumer offsets: the records come again).
 */
export async function writeFileAtomic(path: string, data: string | Buffer, { durable = true } = {}): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  const file = await open(tmp, 'w');
  try {
    await file.writeFile(data);
    if (durable) await file.datasync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  if (!durable) return;
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
