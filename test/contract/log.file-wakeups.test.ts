import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { PartitionReader } from '../../infra/log/file/segments.ts';
import type { LogConsumer, LogRecord } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * A file-log consumer wakes for the partitions it holds that were appended to in this process
 * (by this log or another of the same directory, as on another thread) and reads only those;
 * the others wait for the poll interval, which looks for appends by other processes. Here the
 * interval is a minute: every delivery within the test comes from a wake-up.
 */

const TOPIC = 'wakeups';
const PARTITIONS = 4;
const POLL_MS = 60_000;
const APPENDS = 30;

let dir: string;
const logs: FileEventLog[] = [];
const consumers: LogConsumer[] = [];

const open = async () => {
  const log = await FileEventLog.open({ dir, fsync: 'never', segmentBytes: 64 * 1024, logger: pino({ level: 'silent' }), pollIntervalMs: POLL_MS });
  logs.push(log);
  return log;
};

function follow(log: FileEventLog): LogRecord[] {
  const seen: LogRecord[] = [];
  const consumer = log.consumer({ groupId: 'follower', topics: [TOPIC], fromBeginning: true });
  consumers.push(consumer);
  void consumer.run(async (batch) => {
    seen.push(...batch.records);
  });
  return seen;
}

const appendTo = (log: FileEventLog, partition: number, i: number) => log.append(TOPIC, [{ key: null, partition, value: Buffer.from(`r${i}`) }]);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-log-wakeups-'));
  const log = await open();
  await log.ensureTopics([{ name: TOPIC, partitions: PARTITIONS, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);
});

afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(consumers.splice(0).map((c) => c.stop()));
  await Promise.all(logs.splice(0).map((l) => l.close()));
  await rm(dir, { recursive: true, force: true });
});

it('reads only the partition appended to, once per wake-up, and delivers every record without waiting for the poll', async () => {
  const [log] = logs;
  const reads = new Map<string, number>();
  const read = PartitionReader.prototype.read;
  vi.spyOn(PartitionReader.prototype, 'read').mockImplementation(function (this: PartitionReader, max: number) {
    const partition = (this as unknown as { dir: string }).dir.split('/').at(-1)!;
    reads.set(partition, (reads.get(partition) ?? 0) + 1);
    return read.call(this, max);
  });
  const seen = follow(log);
  // The first look reads every partition once.
  await waitFor(() => reads.size === PARTITIONS, 'the first look at every partition', 5_000);
  for (let i = 0; i < APPENDS; i++) {
    await appendTo(log, 0, i);
    await waitFor(() => seen.length === i + 1, `record ${i} delivered`, 5_000);
  }
  expect(seen.map((r) => r.value!.toString())).toEqual(Array.from({ length: APPENDS }, (_, i) => `r${i}`));
  // Before, every append woke the consumer to read all four partitions.
  expect([1, 2, 3].map((p) => reads.get(String(p)))).toEqual([1, 1, 1]);
  expect(reads.get('0')).toBeGreaterThanOrEqual(APPENDS);
});

it('wakes for an append by another log of the same directory (another thread of the process)', async () => {
  const [log] = logs;
  const other = await open();
  const seen = follow(log);
  for (let i = 0; i < APPENDS; i++) {
    await appendTo(other, i % PARTITIONS, i);
    await waitFor(() => seen.length === i + 1, `record ${i} delivered`, 5_000);
  }
  expect(seen.map((r) => r.value!.toString()).sort()).toEqual(Array.from({ length: APPENDS }, (_, i) => `r${i}`).sort());
});
