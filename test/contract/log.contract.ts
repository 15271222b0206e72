import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '../../infra/log/partitioner.ts';
import type { Batch, EventLog, LogConsumer, LogRecord } from '../../infra/log/port.ts';
import type { TopicSpec } from '../../schemas/catalogue.ts';
import { waitFor } from '../../infra/wait.ts';

export interface LogUnderTest {
  log: EventLog;
  /** A second, independent connection to the same log (another process would see the same). */
  reopen(): Promise<EventLog>;
  cleanup(): Promise<void>;
  /** Whether the log can say who holds a group (the Kafka mock broker has no DescribeGroups). */
  describesGroups: boolean;
}

const PARTITIONS = 4;

function topicSpec(prefix: string): TopicSpec {
  return {
    name: `${prefix}-${randomUUID().slice(0, 8)}`,
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: -1,
    retentionBytes: -1,
  };
}

function rec(i: number, key: string | null = `k${i % 7}`) {
  return { key, value: Buffer.from(`value-${i}`), timestamp: 1_700_000_000_000 + i, headers: { n: String(i) } };
}

/** Collects everything a consumer delivers; `handler` may be overridden per test. */
function collector() {
  const seen: LogRecord[] = [];
  const batches: Batch[] = [];
  return {
    seen,
    batches,
    handler: async (batch: Batch) => {
      batches.push(batch);
      seen.push(...batch.records);
    },
  };
}

/** The behaviour every EventLog adapter must have; run once per adapter. */
export function describeLogContract(name: string, open: () => Promise<LogUnderTest>): void {
  describe(`EventLog contract: ${name}`, () => {
    let subject: LogUnderTest;
    let log: EventLog;
    const consumers: LogConsumer[] = [];

    beforeAll(async () => {
      subject = await open();
      log = subject.log;
    });
    afterAll(async () => {
      await Promise.all(consumers.map((c) => c.stop()));
      await subject?.cleanup();
    });

    function consume(groupId: string, topics: string[], fromBeginning = true) {
      const consumer = log.consumer({ groupId, topics, fromBeginning });
      consumers.push(consumer);
      return consumer;
    }

    it('appends and reads back records in offset order with keys, values, times and headers', async () => {
      const spec = topicSpec('roundtrip');
      await log.ensureTopics([spec]);
      await log.ensureTopics([spec]); // idempotent
      const results = await log.append(spec.name, [rec(1, 'same'), rec(2, 'same'), rec(3, 'same')]);
      const partition = partitionForKey('same', PARTITIONS);
      expect(results).toEqual([
        { partition, offset: 0 },
        { partition, offset: 1 },
        { partition, offset: 2 },
      ]);
      const back = await log.read(spec.name, partition, 0, 10);
      expect(back.map((r) => [r.offset, r.key, r.value?.toString(), r.timestamp, r.headers.n])).toEqual([
        [0, 'same', 'value-1', 1_700_000_000_001, '1'],
        [1, 'same', 'value-2', 1_700_000_000_002, '2'],
        [2, 'same', 'value-3', 1_700_000_000_003, '3'],
      ]);
      expect((await log.read(spec.name, partition, 1, 1)).map((r) => r.offset)).toEqual([1]);
      expect(await log.listTopics()).toContain(spec.name);
    });

    it('reads any range of any partition exactly, at once, again, backwards and past records appended since', async () => {
      const spec = topicSpec('ranges');
      await log.ensureTopics([spec]);
      const keys = Array.from({ length: 200 }, (_, i) => `k-${i}`);
      await log.append(spec.name, keys.map((key, i) => ({ key, value: Buffer.from(String(i)) })));
      const expected = (partition: number, from: number, max: number) =>
        keys.map((key, i) => ({ key, i })).filter(({ key }) => partitionForKey(key, PARTITIONS) === partition).slice(from, from + max).map(({ i }) => String(i));
      const values = (records: LogRecord[]) => records.map((r) => r.value?.toString());

      const whole = await Promise.all([0, 1, 2, 3].map((p) => log.read(spec.name, p, 0, 1_000)));
      whole.forEach((records, p) => expect(values(records)).toEqual(expected(p, 0, 1_000)));
      expect(values(await log.read(spec.name, 2, 10, 5))).toEqual(expected(2, 10, 5));
      expect(values(await log.read(spec.name, 2, 3, 4))).toEqual(expected(2, 3, 4));
      expect(await log.read(spec.name, 1, whole[1].length, 10)).toEqual([]);
      const [later] = await log.append(spec.name, [{ key: keys[0], value: Buffer.from('later') }]);
      expect(values(await log.read(spec.name, later.partition, later.offset - 1, 10))).toEqual([expected(later.partition, later.offset - 1, 1)[0], 'later']);
    });

    it('places keyed records by the shared partitioner and keeps null values', async () => {
      const spec = topicSpec('partitioning');
      await log.ensureTopics([spec]);
      const keys = Array.from({ length: 40 }, (_, i) => `token-${i}`);
      const results = await log.append(
        spec.name,
        keys.map((key) => ({ key, value: null, timestamp: 1_700_000_000_000 })),
      );
      results.forEach((r, i) => expect(r.partition).toBe(partitionForKey(keys[i], PARTITIONS)));
      const ends = await log.endOffsets(spec.name);
      const total = ends.reduce((sum, p) => sum + p.offset, 0);
      expect(total).toBe(40);
      const starts = await log.startOffsets(spec.name);
      expect(starts.map((p) => p.offset)).toEqual([0, 0, 0, 0]);
      const first = await log.read(spec.name, results[0].partition, results[0].offset, 1);
      expect(first[0].value).toBeNull();
      expect(first[0].key).toBe(keys[0]);
    });

    it('appends a record that names its partition to that partition, whatever its key', async () => {
      const spec = topicSpec('named-partition');
      await log.ensureTopics([spec]);
      const elsewhere = (partitionForKey('k', PARTITIONS) + 1) % PARTITIONS;
      const results = await log.append(spec.name, [
        { key: 'k', value: Buffer.from('a'), partition: elsewhere },
        { key: null, value: Buffer.from('b'), partition: elsewhere },
      ]);
      expect(results).toEqual([
        { partition: elsewhere, offset: 0 },
        { partition: elsewhere, offset: 1 },
      ]);
      expect((await log.read(spec.name, elsewhere, 0, 10)).map((r) => r.value?.toString())).toEqual(['a', 'b']);
    });

    it('delivers every record once to a group, in order per partition, and resumes after the commit', async () => {
      const spec = topicSpec('group');
      await log.ensureTopics([spec]);
      await log.append(spec.name, Array.from({ length: 200 }, (_, i) => rec(i)));
      const groupId = `g-${randomUUID().slice(0, 8)}`;
      const first = collector();
      const consumer = consume(groupId, [spec.name]);
      void consumer.run(first.handler);
      await waitFor(() => first.seen.length >= 200, '200 records');
      for (const batch of first.batches) {
        expect(batch.records.every((r) => r.partition === batch.partition && r.topic === spec.name)).toBe(true);
      }
      for (let p = 0; p < PARTITIONS; p++) {
        const offsets = first.seen.filter((r) => r.partition === p).map((r) => r.offset);
        expect(offsets).toEqual(offsets.map((_, i) => i));
      }
      expect(new Set(first.seen.map((r) => r.value?.toString())).size).toBe(200);
      const members = await log.groupMembers(groupId);
      if (subject.describesGroups) {
        expect(members).toHaveLength(1);
        const held = members![0].partitions.filter((p) => p.topic === spec.name).map((p) => p.partition);
        expect(held.sort()).toEqual([0, 1, 2, 3]);
      } else {
        expect(members).toBeNull();
      }
      await consumer.stop();
      expect(await log.groupMembers(groupId)).toEqual(subject.describesGroups ? [] : null);

      const committed = await log.committedOffsets(groupId, spec.name);
      const ends = await log.endOffsets(spec.name);
      expect(committed.sort((a, b) => a.partition - b.partition)).toEqual(
        ends.filter((e) => e.offset > 0).sort((a, b) => a.partition - b.partition).map((e) => ({ ...e, metadata: null })),
      );
      expect(await log.listGroups()).toContain(groupId);

      await log.append(spec.name, [rec(1000, 'late')]);
      const second = collector();
      const resumed = consume(groupId, [spec.name]);
      void resumed.run(second.handler);
      await waitFor(() => second.seen.length >= 1, 'the record appended after the commit');
      await resumed.stop();
      expect(second.seen.map((r) => r.value?.toString())).toEqual(['value-1000']);
    });

    it('starts a new group at the end when fromBeginning is false, then tails new records', async () => {
      const spec = topicSpec('tail');
      await log.ensureTopics([spec]);
      await log.append(spec.name, [rec(1), rec(2)]);
      const seen = collector();
      const consumer = consume(`g-${randomUUID().slice(0, 8)}`, [spec.name], false);
      void consumer.run(seen.handler);
      await waitFor(() => consumer.assignment().length === PARTITIONS, 'assignment');
      // A record appended by another connection, as by another process.
      const other = await subject.reopen();
      await waitFor(async () => {
        if (seen.seen.length > 0) return true;
        await other.append(spec.name, [rec(3, 'k-tail')]);
        return false;
      }, 'a tailed record', 30_000);
      await other.close();
      expect(seen.seen.every((r) => r.value?.toString() === 'value-3')).toBe(true);
    });

    it('redelivers a batch whose handler failed, and seek rewinds a partition', async () => {
      const spec = topicSpec('redeliver');
      await log.ensureTopics([spec]);
      await log.append(spec.name, Array.from({ length: 5 }, (_, i) => rec(i, 'one-key')));
      const partition = partitionForKey('one-key', PARTITIONS);
      const delivered: number[] = [];
      let failures = 0;
      let rewound = false;
      const consumer = consume(`g-${randomUUID().slice(0, 8)}`, [spec.name]);
      void consumer.run(async (batch) => {
        if (failures === 0) {
          failures++;
          throw new Error('handler failure on purpose');
        }
        delivered.push(...batch.records.map((r) => r.offset));
        if (!rewound && delivered.includes(4)) {
          rewound = true;
          consumer.seek(spec.name, partition, 2);
        }
      });
      await waitFor(() => delivered.filter((o) => o === 4).length === 2, 'redelivery after seek: ' + delivered.join());
      expect(failures).toBe(1);
      expect(delivered).toEqual([0, 1, 2, 3, 4, 2, 3, 4]);
    });

    it('with autoCommit off commits only what the caller commits, and starts where startPosition says', async () => {
      const spec = topicSpec('caller-commits');
      await log.ensureTopics([spec]);
      await log.append(spec.name, Array.from({ length: 10 }, (_, i) => rec(i, 'one-key')));
      const partition = partitionForKey('one-key', PARTITIONS);
      const groupId = `g-${randomUUID().slice(0, 8)}`;
      const first = collector();
      const reader = log.consumer({ groupId, topics: [spec.name], fromBeginning: true, autoCommit: false });
      consumers.push(reader);
      void reader.run(first.handler);
      await waitFor(() => first.seen.length >= 10, 'the 10 records');
      // Read to the end, yet nothing is committed until the caller says what it covers.
      expect(await log.committedOffsets(groupId, spec.name)).toEqual([]);
      await reader.commit([
        { topic: spec.name, partition, offset: 4, metadata: '{"handledThrough":4}' },
        { topic: 'a-topic-it-does-not-hold', partition: 0, offset: 99 },
      ]);
      // The metadata comes back with the offset (a downstream processor reads its upstream's progress from it).
      expect(await log.committedOffsets(groupId, spec.name)).toEqual([{ partition, offset: 4, metadata: '{"handledThrough":4}' }]);
      await reader.stop();

      // The caller's checkpoint covers 7: that, not the committed 4, is where the next member starts.
      const second = collector();
      const asked: string[] = [];
      const resumed = log.consumer({
        groupId,
        topics: [spec.name],
        fromBeginning: true,
        autoCommit: false,
        startPosition: async (topic, p) => {
          asked.push(`${topic}#${p}`);
          return p === partition ? 7 : undefined;
        },
      });
      consumers.push(resumed);
      void resumed.run(second.handler);
      await waitFor(() => second.seen.length >= 3, 'the records after the start position');
      await resumed.stop();
      expect(second.seen.map((r) => r.offset)).toEqual([7, 8, 9]);
      expect(asked).toContain(`${spec.name}#${partition}`);
      expect(await log.committedOffsets(groupId, spec.name)).toEqual([{ partition, offset: 4, metadata: '{"handledThrough":4}' }]);
    });
  });
}
