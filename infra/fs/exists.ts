import { access } from 'node:fs/promises';

/** Whether something is at `path` (a file, a directory, ...). */
export async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
