import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../fs/atomic-write.ts';

/** A consumer group's committed offsets in the file log: topic → partition → next offset. */
export type GroupOffsets = Record<string, Record<string, number>>;

export async function readGroupOffsets(file: string): Promise<GroupOffsets> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as GroupOffsets;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

/** Not synced: a commit lost to a power cut only means records are delivered again. */
export async function writeGroupOffsets(file: string, offsets: GroupOffsets): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(offsets), { durable: false });
}

