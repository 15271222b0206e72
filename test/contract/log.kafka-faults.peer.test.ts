import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KafkaEventLog } from '../../infra/log/kafka/kafka-log.ts';
import { startMockBroker, type MockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import { waitFor } from '../../infra/wait.ts';

const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });
const PARTITIONS = 4;

const records = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ key: `k${from + i}`, value: Buffer.from(`v${from + i}`), timestamp: 1_700_000_000_000 + from + i }));

/** Broker faults the Kafka log's shared producer and admin client must get over, on a broker of their own. */
describe('the Kafka log under broker faults (mock broker)', () => {
  let broker: MockBroker;
  const logs: KafkaEventLog[] = [];
  const open = (clientId: string) => {
    const log = new KafkaEventLog({ brokers: [broker.brokers], clientId, idempotent: false, logger, sessionTimeoutMs: 6_000 });
    logs.push(log);
    return log;
  };
  const newTopic = async (log: KafkaEventLog) => {
    const topic = `faults-${randomUUID().slice(0, 8)}`;
    await log.ensureTopics([{ name: topic, partitions: PARTITIONS, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);
    return topic;
  };

  beforeAll(async () => {
    broker = await startMockBroker();
  });
  afterAll(async () => {
    try {
      await Promise.all(logs.map((l) => l.close()));
    } finally {
      await broker?.stop();
    }
  });

  it('works again once a broker that froze while its clients connected is back', async () => {
    const setup = open('faults-setup');
    const topic = await newTopic(setup);
    const log = open('faults-frozen');
    // Frozen, the broker's kernel still accepts connections, but nothing answers the handshake.
    broker.pause();
    try {
      await expect(log.listTopics()).rejects.toThrow();
      await expect(log.append(topic, records(0, 1))).rejects.toThrow();
    } finally {
      broker.resume();
    }
    expect(await log.listTopics()).toContain(topic);
    expect(await log.append(topic, records(1, 10))).toHaveLength(10);
    expect((await log.endOffsets(topic)).reduce((n, p) => n + p.offset, 0)).toBe(10);
  }, 180_000);

  it('stops a group member while the broker is frozen, without waiting for the broker to come back', async () => {
    const log = open('faults-member');
    const topic = await newTopic(log);
    await log.append(topic, records(0, 10));
    const member = log.consumer({ groupId: `faults-${randomUUID().slice(0, 8)}`, topics: [topic], fromBeginning: true });
    let handled = 0;
    const running = member.run(async (batch) => {
      handled += batch.records.length;
    });
    await waitFor(() => handled === 10, 'the member to join and read the topic', 60_000);
    broker.pause();
    try {
      // Frozen: the member's fetches, heartbeats and its leave go unanswered, and kafkajs
      // retries them (30 s per request) for minutes; a stop must not wait for that.
      const stoppedWhileFrozen = await Promise.race([member.stop().then(() => true), delay(60_000, false, { ref: false })]);
      expect(stoppedWhileFrozen, 'stop() resolved within 60 s of a frozen broker').toBe(true);
      await running;
    } finally {
      broker.resume();
    }
  }, 180_000);

  it('connects no client again once closed: a read or an append after close() is refused', async () => {
    // A read after close() (a member's start positions, asked for by a join that completed
    // while it left) once connected a new admin client that nobody closed: its socket and
    // timers kept a stopped worker thread, and its process, from ending.
    const log = open('faults-closed');
    const topic = await newTopic(log);
    await log.append(topic, records(0, 1));
    await log.close();
    await expect(log.endOffsets(topic)).rejects.toThrow(/closed/);
    await expect(log.append(topic, records(1, 1))).rejects.toThrow(/closed/);
  }, 60_000);
});
