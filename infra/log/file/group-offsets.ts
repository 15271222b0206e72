import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../fs/atomic-write.ts';

/** A consumer group's committed offsets in the file log, each topic → partition → value. */
export interface GroupOffsets {
  /** The next offset to read. */
  offsets: Record<string, Record<string, number>>;
  /** What the committer stored with an offset (Kafka's commit metadata), where it stored any. */
  metadata: Record<string, Record<string, string>>;
}

/**
 * The file holds the offsets by topic, as it always has, and the metadata under a key no topic
 * name can have (topic names are letters, digits, `.`, `_` and `-`).
 */
const METADATA_KEY = '$metadata';

export async function readGroupOffsets(file: string): Promise<GroupOffsets> {
  try {
    const { [METADATA_KEY]: metadata = {}, ...offsets } = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, never>>;
    return { offsets, metadata };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { offsets: {}, metadata: {} };
    throw err;
  }
}

/** Not synced: a commit lost to a power cut only means records are delivered again. */
export async function writeGroupOffsets(file: string, { offsets, metadata }: GroupOffsets): Promise<void> {
  await writeFileAtomic(file, JSON.stringify({ ...offsets, [METADATA_KEY]: metadata }), { durable: false });
}

