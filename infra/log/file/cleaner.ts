import { open, rename, stat, unlink } from 'node:fs/promises';
import type { TopicSpec } from '../../../schemas/catalogue.ts';
import { encodeRecords, scanRecords, type StoredRecord } from './record-format.ts';
import { listSegments, segmentPath, syncDirectory } from './segments.ts';

/**
 * Keeps a partition within its topic's cleanup policy. Runs under the log's process lock
 * when a segment is closed, and never touches the active segment:
 * - delete: closed segments older than retentionMs (by last write) or beyond
 *   retentionBytes (oldest first) are removed;
 * - compact: closed segments are rewritten keeping, for each key, only the record with
 *   the highest offset in the partition (keyless records are kept). Offsets are kept, so
 *   readers see gaps, as in Kafka.
 * A reader with a removed or replaced segment open keeps reading its old inode.
 */
export async function cleanPartition(dir: string, spec: TopicSpec, now: number): Promise<void> {
  const segments = await listSegments(dir);
  const closed = segments.slice(0, -1);
  if (closed.length === 0) return;
  if (spec.cleanupPolicy === 'compact') {
    await compact(dir, segments);
    return;
  }
  const sizes = await Promise.all(segments.map((b) => stat(segmentPath(dir, b))));
  let total = sizes.reduce((sum, s) => sum + s.size, 0);
  for (let i = 0; i < closed.length; i++) {
    const tooOld = spec.retentionMs >= 0 && now - sizes[i].mtimeMs > spec.retentionMs;
    const tooBig = spec.retentionBytes >= 0 && total > spec.retentionBytes;
    if (!tooOld && !tooBig) break;
    await unlink(segmentPath(dir, closed[i]));
    total -= sizes[i].size;
  }
  await syncDirectory(dir);
}

async function compact(dir: string, segments: number[]): Promise<void> {
  const latestByKey = new Map<string, number>();
  for (const base of segments) {
    // Values are views of the segment read whole (no copy per record): a compacted topic's
    // active segment can hold tens of thousands of large values.
    scanRecords(
      await readWhole(segmentPath(dir, base)),
      (record) => {
        if (record.key !== null) latestByKey.set(record.key, record.offset);
      },
      false,
    );
  }
  for (const base of segments.slice(0, -1)) {
    const path = segmentPath(dir, base);
    const kept: StoredRecord[] = [];
    let dropped = 0;
    scanRecords(
      await readWhole(path),
      (record) => {
        if (record.key === null || latestByKey.get(record.key) === record.offset) {
          kept.push(record);
        } else {
          dropped++;
        }
      },
      false,
    );
    if (dropped === 0) continue;
    const tmp = `${path}.compacting`;
    const file = await open(tmp, 'w');
    try {
      await file.writeFile(encodeRecords(kept, kept.map((r) => r.offset)));
      await file.datasync();
    } finally {
      await file.close();
    }
    await rename(tmp, path);
  }
  await syncDirectory(dir);
}

async function readWhole(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    return await file.readFile();
  } finally {
    await file.close();
  }
}
