import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaEventLog } from '../../infra/log/kafka/kafka-log.ts';
import type { Batch, LogConsumer, LogRecord } from '../../infra/log/port.ts';
import { startMockBroker, type MockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import { waitFor } from '../../infra/wait.ts';

const PARTITIONS = 4;
const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

function records(from: number, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    key: `token-${(from + i) % 13}`,
    value: Buffer.from(`v${from + i}`),
    timestamp: 1_700_000_000_000 + from + i,
  }));
}

/** A group member that records what it was handed; its handler can be held mid-batch. */
function member(consumer: LogConsumer) {
  const seen: LogRecord[] = [];
  let gate: Promise<void> | undefined;
  let held: Batch | undefined;
  const handler = async (batch: Batch): Promise<void> => {
    if (gate) {
      held = batch;
      await gate;
    }
    seen.push(...batch.records);
  };
  return {
    consumer,
    seen,
    handler,
    /** The next batch waits in the handler until the returned function is called. */
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = undefined;
        release();
      };
    },
    held: () => held,
    partitions: () => consumer.assignment().map((a) => a.partition).sort(),
  };
}

const values = (seen: LogRecord[]) => new Set(seen.map((r) => r.value?.toString()));

describe('Kafka consumer groups (mock broker)', () => {
  let broker: MockBroker;
  let log: KafkaEventLog;

  beforeAll(async () => {
    broker = await startMockBroker();
    log = new KafkaEventLog({ brokers: [broker.brokers], clientId: 'groups', idempotent: false, logger, sessionTimeoutMs: 6_000 });
  });
  afterAll(async () => {
    try {
      await log?.close();
    } finally {
      await broker?.stop();
    }
  });

  it('splits the partitions between two members and hands them all to the survivor, committing the batch in flight', async () => {
    const topic = `groups-${randomUUID().slice(0, 8)}`;
    await log.ensureTopics([{ name: topic, partitions: PARTITIONS, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);
    await log.append(topic, records(0, 400));
    const groupId = `g-${randomUUID().slice(0, 8)}`;
    const revokedFromA: number[] = [];
    const a = member(log.consumer({ groupId, topics: [topic], fromBeginning: true, onRevoked: (partitions) => revokedFromA.push(...partitions.map((p) => p.partition)) }));
    const b = member(log.consumer({ groupId, topics: [topic], fromBeginning: true }));
    // The second member joins once the first holds the group: a scale-out. (Two first joins
    // at once make librdkafka's mock refuse a SyncGroup now and then; the consumer retries it,
    // but the group can then take longer than this test waits to settle.)
    const failures: unknown[] = [];
    const aRun = a.consumer.run(a.handler).catch((err: unknown) => failures.push(err));
    await waitFor(() => a.partitions().length === PARTITIONS, 'the first member to hold every partition');
    const bRun = b.consumer.run(b.handler).catch((err: unknown) => failures.push(err));

    await waitFor(
      () => a.partitions().length > 0 && b.partitions().length > 0 && a.partitions().length + b.partitions().length === PARTITIONS,
      'both members to hold partitions',
      30_000,
    );
    expect([...a.partitions(), ...b.partitions()].sort()).toEqual([0, 1, 2, 3]);
    // A is told which of its partitions went to B, and only those.
    expect(revokedFromA).toEqual(expect.arrayContaining(b.partitions()));
    await waitFor(() => values([...a.seen, ...b.seen]).size === 400, 'the first 400 records');

    // Stop A while its handler holds a batch: stop() must let the batch finish and commit it.
    const release = a.hold();
    const aPartitions = a.partitions();
    await log.append(topic, records(400, 100));
    const inFlight = await waitFor(() => a.held(), 'a batch held in A', 30_000);
    const stopped = a.consumer.stop();
    release();
    await stopped;
    const committed = await log.committedOffsets(groupId, topic);
    const lastHeld = inFlight.records[inFlight.records.length - 1].offset;
    expect(committed.find((c) => c.partition === inFlight.partition)?.offset).toBeGreaterThan(lastHeld);

    await waitFor(() => b.partitions().length === PARTITIONS, 'B to take over every partition', 30_000);
    await log.append(topic, records(500, 100));
    await waitFor(() => values([...a.seen, ...b.seen]).size === 600, 'every record');

    // B picked up A's partitions after A's last commit: the drained batch is not handed over again.
    const heldValues = new Set(inFlight.records.map((r) => r.value?.toString()));
    expect(b.seen.filter((r) => heldValues.has(r.value?.toString())).length).toBe(0);
    expect(aPartitions).toContain(inFlight.partition);

    await b.consumer.stop();
    await Promise.all([aRun, bRun]);
    expect(failures).toEqual([]); // a member that gave up would have ended its role
    const ends = await log.endOffsets(topic);
    expect((await log.committedOffsets(groupId, topic)).sort((x, y) => x.partition - y.partition)).toEqual(
      ends.filter((e) => e.offset > 0).map((e) => ({ ...e, metadata: null })),
    );
  });
});
