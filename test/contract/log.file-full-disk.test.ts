import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { LogRecord } from '../../infra/log/port.ts';

/**
 * The file log on a disk that fills: an append that does not fit fails with an error that
 * says so, every append acknowledged before it reads back whole, nothing of the failed one is
 * left, and appends go on once space returns. The disk is a tmpfs of 1 MiB mounted for the
 * test (the suite runs as root, as CI does), grown by a remount.
 */

const run = promisify(execFile);
const TOPIC = 'filling';
const logger = pino({ level: 'silent' });
let dir: string;

const open = () => FileEventLog.open({ dir, fsync: 'always', segmentBytes: 256 * 1024, logger, pollIntervalMs: 20 });

async function readAll(log: FileEventLog): Promise<LogRecord[]> {
  const records: LogRecord[] = [];
  for (;;) {
    const page = await log.read(TOPIC, 0, records.length, 500);
    if (page.length === 0) return records;
    records.push(...page);
  }
}

/** 16 records of 3 KiB, numbered from `first`: a batch the disk may have room for only in part. */
function batch(first: number) {
  return Array.from({ length: 16 }, (_, i) => ({ key: `k${first + i}`, value: Buffer.alloc(3 * 1024, (first + i) % 251), timestamp: 1_700_000_000_000 + first + i }));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-log-full-'));
  await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
});

afterAll(async () => {
  await run('umount', ['--lazy', dir]).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
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
      expect((await readAll(log)).map((r) => r.key)).toEqual(acknowledged);

      await run('mount', ['-o', 'remount,size=4m', dir]);
      const after = batch(acknowledged.length);
      const offsets = (await log.append(TOPIC, after)).map((r) => r.offset);
      expect(offsets).toEqual(after.map((_, i) => acknowledged.length + i));
      acknowledged.push(...after.map((r) => r.key));
    } finally {
      await log.close();
    }

    const reopened = await open();
    try {
      const records = await readAll(reopened);
      expect(records.map((r) => r.key)).toEqual(acknowledged);
      expect(records.map((r) => r.offset)).toEqual(acknowledged.map((_, i) => i));
      expect(records.every((r) => r.value?.equals(Buffer.alloc(3 * 1024, r.offset % 251)))).toBe(true);
    } finally {
      await reopened.close();
    }
  });
});
