import { AssignerProtocol, Kafka, type Admin, type Message, type Producer } from 'kafkajs';
import type { Logger } from '../../logging.ts';
import type {
  AppendResult,
  CommittedOffset,
  ConsumerOptions,
  EventLog,
  GroupMember,
  LogConsumer,
  LogRecord,
  OutgoingRecord,
  PartitionOffset,
} from '../port.ts';
import type { TopicSpec } from '../../../schemas/catalogue.ts';
import { consumerSettings, KafkaLogConsumer, type ConsumerSettings } from './kafka-consumer.ts';
import { isUnsupportedApi } from './kafka-errors.ts';
import { kafkaLogCreator, kafkaLogLevel } from './kafka-logging.ts';
import { TopicReader } from './kafka-read.ts';
import { sharedPartitioner, toMessage } from './kafka-records.ts';
import { SharedClient } from './shared-client.ts';

export interface KafkaEventLogOptions {
  brokers: string[];
  clientId: string;
  /** Idempotent producer (needs InitProducerId, which real brokers have and the kcat mock lacks). */
  idempotent: boolean;
  logger: Logger;
  /**
   * Consumer session timeout (default 30 s). A member silent this long is dropped from its
   * group; librdkafka's mock broker also waits about this long to re-balance after a member
   * leaves, so its tests pass a short one.
   */
  sessionTimeoutMs?: number;
}

/**
 * The event log on Kafka. One producer and one admin client per instance (SharedClient);
 * consumers are kafkajs consumer groups (KafkaLogConsumer).
 */
export class KafkaEventLog implements EventLog {
  readonly kind = 'kafka';
  private readonly kafka: Kafka;
  private readonly settings: ConsumerSettings;
  private readonly placements = new WeakMap<Message, number>();
  private readonly producer: SharedClient<Producer>;
  private readonly admin: SharedClient<Admin>;
  private readonly consumers = new Set<KafkaLogConsumer>();
  /** A reader per topic read so far (read()), made at the first read of it. */
  private readonly readers = new Map<string, TopicReader>();
  /** Groups this instance ran consumers in: listGroups' answer on brokers without ListGroups. */
  private readonly usedGroups = new Set<string>();

  constructor(private readonly options: KafkaEventLogOptions) {
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: kafkaLogLevel(options.logger),
      logCreator: kafkaLogCreator(options.logger),
    });
    this.settings = consumerSettings(options.sessionTimeoutMs ?? 30_000);
    this.producer = new SharedClient(() =>
      this.kafka.producer({
        idempotent: options.idempotent,
        // kafkajs keeps order under retries for an idempotent producer only with one request in flight
        maxInFlightRequests: options.idempotent ? 1 : undefined,
        createPartitioner: sharedPartitioner(this.placements),
      }),
    );
    this.admin = new SharedClient(() => this.kafka.admin());
  }

  ensureTopics(specs: TopicSpec[]): Promise<void> {
    return this.admin.use((admin) => this.createMissing(admin, specs));
  }

  private async createMissing(admin: Admin, specs: TopicSpec[]): Promise<void> {
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((s) => !existing.has(s.name));
    if (missing.length === 0) return;
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((s) => ({
          topic: s.name,
          numPartitions: s.partitions,
          configEntries: [
            { name: 'cleanup.policy', value: s.cleanupPolicy },
            { name: 'retention.ms', value: String(s.retentionMs) },
            { name: 'retention.bytes', value: String(s.retentionBytes) },
          ],
        })),
      });
    } catch (err) {
      // Brokers that cannot create topics on request (librdkafka's mock names no controller)
      // may still create them on first use: a metadata request for the names does that.
      try {
        await admin.fetchTopicMetadata({ topics: missing.map((s) => s.name) });
      } catch (fallbackErr) {
        throw new Error(
          `cannot create topics ${missing.map((s) => s.name).join(', ')}: ${(err as Error).message}; ` +
            `auto-creation failed too: ${(fallbackErr as Error).message}`,
        );
      }
      await this.reportAutoCreated(admin, missing, err as Error);
    }
  }

  async append(topic: string, records: OutgoingRecord[]): Promise<AppendResult[]> {
    if (records.length === 0) return [];
    const now = Date.now();
    const messages = records.map((r) => toMessage(r, now));
    const sent = await this.producer.use((producer) => producer.send({ topic, acks: -1, messages }));
    const nextOffset = new Map(sent.map((m) => [m.partition, Number(m.baseOffset)]));
    // Within one produce request a partition's records keep their order and get consecutive offsets.
    return messages.map((message) => {
      const partition = this.placements.get(message);
      const offset = partition === undefined ? undefined : nextOffset.get(partition);
      if (partition === undefined || offset === undefined) {
        throw new Error(`kafka acknowledged ${topic} without an offset for every record`);
      }
      nextOffset.set(partition, offset + 1);
      return { partition, offset };
    });
  }

  consumer(options: ConsumerOptions): LogConsumer {
    this.usedGroups.add(options.groupId);
    const consumer = new KafkaLogConsumer(this.kafka, options, this.settings, this.options.logger);
    this.consumers.add(consumer);
    return consumer;
  }

  async read(topic: string, partition: number, offset: number, max: number): Promise<LogRecord[]> {
    const bounds = (await this.offsets(topic)).find((p) => p.partition === partition);
    if (!bounds) throw new Error(`${topic} has no partition ${partition}`);
    // Offsets the broker no longer retains read as if from the first retained one.
    const from = Math.max(offset, bounds.low);
    const end = Math.min(bounds.high, from + max);
    if (max <= 0 || from >= end) return [];
    let reader = this.readers.get(topic);
    if (!reader || reader.failed) {
      void reader?.close().catch(() => undefined); // given up by kafkajs: only its connections to release
      reader = new TopicReader(this.kafka, this.settings, this.options.clientId, topic);
      this.readers.set(topic, reader);
    }
    return reader.read({ partition, from, end });
  }

  async startOffsets(topic: string): Promise<PartitionOffset[]> {
    return (await this.offsets(topic)).map(({ partition, low }) => ({ partition, offset: low }));
  }

  async endOffsets(topic: string): Promise<PartitionOffset[]> {
    return (await this.offsets(topic)).map(({ partition, high }) => ({ partition, offset: high }));
  }

  async committedOffsets(groupId: string, topic: string): Promise<CommittedOffset[]> {
    const [answer] = await this.admin.use((admin) => admin.fetchOffsets({ groupId, topics: [topic] }));
    return (answer?.partitions ?? [])
      .map(({ partition, offset, metadata }) => ({ partition, offset: Number(offset), metadata: metadata || null }))
      .filter((p) => p.offset >= 0)
      .sort((a, b) => a.partition - b.partition);
  }

  async listGroups(): Promise<string[]> {
    try {
      return (await this.admin.use((admin) => admin.listGroups())).groups.map((g) => g.groupId).sort();
    } catch (err) {
      if (!isUnsupportedApi(err)) throw err;
      this.options.logger.warn(
        { err },
        'the broker cannot list consumer groups (no ListGroups API); answering with the groups this process consumed in',
      );
      return [...this.usedGroups].sort();
    }
  }

  async groupMembers(groupId: string): Promise<GroupMember[] | null> {
    let described;
    try {
      [described] = (await this.admin.use((admin) => admin.describeGroups([groupId]))).groups;
    } catch (err) {
      if (isUnsupportedApi(err)) return null;
      throw err;
    }
    return (described?.members ?? []).map(({ memberId, clientHost, memberAssignment }) => {
      // A member that joined but has no assignment yet (or a standby of the exclusive assigner) holds nothing.
      const assigned = memberAssignment.length > 0 ? AssignerProtocol.MemberAssignment.decode(memberAssignment)?.assignment : undefined;
      const partitions = Object.entries(assigned ?? {}).flatMap(([topic, ids]) => ids.map((partition) => ({ topic, partition })));
      return { member: `${memberId} (${clientHost.replace(/^\//, '')})`, partitions };
    });
  }

  async listTopics(): Promise<string[]> {
    return (await this.admin.use((admin) => admin.listTopics())).filter((t) => !t.startsWith('__')).sort();
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.stop()));
    this.consumers.clear();
    await Promise.all([...this.readers.values()].map((r) => r.close()));
    this.readers.clear();
    await Promise.all([this.producer.close(), this.admin.close()]);
  }

  private async offsets(topic: string): Promise<{ partition: number; low: number; high: number }[]> {
    return (await this.admin.use((admin) => admin.fetchTopicOffsets(topic)))
      .map(({ partition, low, high }) => ({ partition, low: Number(low), high: Number(high) }))
      .sort((a, b) => a.partition - b.partition);
  }

  /** Logs what an auto-created topic lacks compared with its spec: configs always, partitions when they differ. */
  private async reportAutoCreated(admin: Admin, specs: TopicSpec[], cause: Error): Promise<void> {
    const { topics } = await admin.fetchTopicMetadata({ topics: specs.map((s) => s.name) });
    for (const spec of specs) {
      const partitions = topics.find((t) => t.name === spec.name)?.partitions.length ?? 0;
      this.options.logger.warn(
        { topic: spec.name, wanted: spec.partitions, partitions, cause: cause.message },
        partitions === spec.partitions
          ? 'topic auto-created by the broker without its cleanup and retention settings'
          : 'topic auto-created by the broker with a partition count other than its spec',
      );
    }
  }
}
