import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Replaces a file so that a crash leaves either the old or the new content, never a mix. */
export async function writeFileAtomic(path: string, data: string | Buffer): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  const file = await open(tmp, 'w');
  try {
    await file.writeFile(data);
    await file.datasync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  const dir = await open(dirname(path), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
