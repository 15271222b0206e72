import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { mountTmpfs, type TestDisk } from '../helpers/tmpfs.ts';

/**
 * The file log on a disk that fills: an append that does not fit fails with an error that
 * says so, every append acknowledged before it reads back whole, nothing of the failed one is
 * left, and appends go on once space returns. The disk is a tmpfs of 1 MiB mounted for the
 * test (the suite runs as root, as CI does), grown by a remount.
 */

const TOPIC = 'filling';
const logger = pino({ level: 'silent' });
let disk: TestDisk;

const open = () => FileEventLog.open({ dir: disk.dir, fsync: 'always', segmentBytes: 256 * 1024, logger, pollIntervalMs: 20 });

/** 16 records of 3 KiB, numbered from `first`: a batch the disk may have room for only in part. */
function batch(first: number) {
  return Array.from({ length: 16 }, (_, i) => ({ key: `k${first + i}`, value: Buffer.alloc(3 * 1024, (first + i) % 251), timestamp: 1_700_000_000_000 + first + i }));
}

beforeAll(async () => {
  disk = await mountTmpfs('1m');
});

afterAll(async () => {
  await disk?.remove();
});

describe('file log on a disk that fills', () => {
  it('refuses the append that does not fit, keeps every acknowledged one, and appends again once space returns', async () => {
    const acknowledged: string[] = [];
    const log = await open();
    try {
      await log.ensureTopics([{ name: TOPIC, partitions: 1, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);
      let refusal: NodeJS.ErrnoException | undefined;
      while (refusal === undefined) {
        const records = batch(acknowledged.length);
        await log.append(TOPIC, records).then(
          (results) => {
            expect(results.map((r) => r.offset)).toEqual(records.map((_, i) => acknowledged.length + i));
            acknowledged.push(...records.map((r) => r.key));
          },
          (err: NodeJS.ErrnoException) => (refusal = err),
        );
      }
      expect(acknowledged.length).toBeGreaterThan(100);
      expect(refusal.code).toBe('ENOSPC');
      expect(refusal.message).toContain(log.partitionDir(TOPIC, 0));
      expect(refusal.message).toMatch(/no space left/i);
      // Full still: the next append is refused too, and neither leaves a part of itself behind.
      await expect(log.append(TOPIC, batch(acknowledged.length))).rejects.toMatchObject({ code: 'ENOSPC' });
      expect((await readTopic(log, TOPIC)).map((r) => r.key)).toEqual(acknowledged);

      await disk.resize('4m');
      const after = batch(acknowledged.length);
      const offsets = (await log.append(TOPIC, after)).map((r) => r.offset);
      expect(offsets).toEqual(after.map((_, i) => acknowledged.length + i));
      acknowledged.push(...after.map((r) => r.key));
    } finally {
      await log.close();
    }

    const reopened = await open();
    try {
      const records = await readTopic(reopened, TOPIC);
      expect(records.map((r) => r.key)).toEqual(acknowledged);
      expect(records.map((r) => r.offset)).toEqual(acknowledged.map((_, i) => i));
      expect(records.every((r) => r.value?.equals(Buffer.alloc(3 * 1024, r.offset % 251)))).toBe(true);
    } finally {
      await reopened.close();
    }
  });
});
