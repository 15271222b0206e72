import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { partitionForKey } from '../../infra/log/partitioner.ts';
import type { Batch, LogConsumer, LogRecord } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * The file log has no coordinator to spread a group's partitions over its members, so members
 * given shares split them (the threads of one process running a processor with a task per
 * partition): each reads only its partitions, commits only them into the one group file, and a
 * second member of a share waits as a standby.
 */

const TOPIC = 'shared-topic';
const PARTITIONS = 4;
let dir: string;
let log: FileEventLog;
const consumers: LogConsumer[] = [];

function member(groupId: string, index: number, count: number) {
  const seen: LogRecord[] = [];
  const consumer = log.consumer({ groupId, topics: [TOPIC], fromBeginning: true, share: { index, count } });
  consumers.push(consumer);
  void consumer.run(async (batch: Batch) => {
    seen.push(...batch.records);
  });
  return { consumer, seen };
}

function partitionsOf(records: LogRecord[]): number[] {
  return [...new Set(records.map((r) => r.partition))].sort();
}

/** A key that the partitioner places on `partition`. */
function keyOn(partition: number): string {
  for (let i = 0; ; i++) if (partitionForKey(`key-${i}`, PARTITIONS) === partition) return `key-${i}`;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-log-shares-'));
  log = await FileEventLog.open({ dir, fsync: 'never', segmentBytes: 4096, logger: pino({ level: 'silent' }), pollIntervalMs: 20 });
  await log.ensureTopics([{ name: TOPIC, partitions: PARTITIONS, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);
  await log.append(TOPIC, Array.from({ length: 400 }, (_, i) => ({ key: `k${i}`, value: Buffer.from(`v${i}`), timestamp: 1_700_000_000_000 + i })));
});

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()));
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('file log: members with shares of a group', () => {
  it('split the partitions, and both members’ commits are kept in the one group file', async () => {
    const ends = await log.endOffsets(TOPIC);
    expect(ends.every((e) => e.offset > 0)).toBe(true);
    const even = member('split', 0, 2);
    const odd = member('split', 1, 2);
    await waitFor(() => even.seen.length + odd.seen.length >= 400, 'every record');
    expect(partitionsOf(even.seen)).toEqual([0, 2]);
    expect(partitionsOf(odd.seen)).toEqual([1, 3]);
    const members = await log.groupMembers('split');
    expect(members.map((m) => m.partitions.map((p) => p.partition)).sort()).toEqual([
      [0, 2],
      [1, 3],
    ]);
    await waitFor(async () => (await log.committedOffsets('split', TOPIC)).length === PARTITIONS, 'a commit of every partition');
    await Promise.all([even.consumer.stop(), odd.consumer.stop()]);
    expect(await log.groupMembers('split')).toEqual([]);
    const committed = (await log.committedOffsets('split', TOPIC)).sort((a, b) => a.partition - b.partition);
    expect(committed).toEqual(ends.map((e) => ({ ...e, metadata: null })));

    // One member taking every partition resumes from both members' commits.
    const whole = member('split', 0, 1);
    await log.append(TOPIC, [{ key: keyOn(3), value: Buffer.from('late'), timestamp: 1_700_000_001_000 }]);
    await waitFor(() => whole.seen.length >= 1, 'the record appended after the commits');
    expect(whole.seen.map((r) => r.value?.toString())).toEqual(['late']);
    await whole.consumer.stop();
  });

  it('keeps a second member of a share waiting until the first stops', async () => {
    const first = member('standby', 1, 2);
    await waitFor(() => first.seen.length > 0 && partitionsOf(first.seen).length === 2, 'the first member reading its share');
    const second = member('standby', 1, 2);
    const other = member('standby', 0, 2);
    await waitFor(() => other.seen.length > 0, 'the member of the other share reading beside it');
    expect(second.seen).toEqual([]);
    await first.consumer.stop();
    await waitFor(async () => (await log.groupMembers('standby')).length === 2, 'the standby holding the share');
    await log.append(TOPIC, [{ key: keyOn(1), value: Buffer.from('after the hand-over'), timestamp: 1_700_000_002_000 }]);
    await waitFor(() => second.seen.some((r) => r.value?.toString() === 'after the hand-over'), 'the standby reading on');
    expect(partitionsOf(second.seen).every((p) => p % 2 === 1)).toBe(true);
  });
});
