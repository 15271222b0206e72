import { setTimeout as delay } from 'node:timers/promises';
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from '../../logging.ts';
import { resolvesWithin } from '../../wait.ts';
import type { Batch, BatchContext, CommitOffset, ConsumerOptions, LogConsumer, TopicPartition } from '../port.ts';
import { copartitionedAssigner } from './copartitioned-assigner.ts';
import { exclusiveAssigner } from './exclusive-assigner.ts';
import { toLogRecord } from './kafka-records.ts';

type Handler = (batch: Batch, ctx: BatchContext) => Promise<void>;

/** kafkajs consumer settings shared by group members and the log's short-lived readers. */
export interface ConsumerSettings {
  sessionTimeout: number;
  rebalanceTimeout: number;
  heartbeatInterval: number;
  maxWaitTimeInMs: number;
}

export function consumerSettings(sessionTimeoutMs: number): ConsumerSettings {
  return {
    sessionTimeout: sessionTimeoutMs,
    // How long a join may wait for the other members (kafkajs gives its JoinGroup 5 s more,
    // and stop() waits for a join in progress). Our members beat during batches and re-join
    // after the chunk in hand, so kafkajs's default of 60 s only makes a stuck join, and a
    // stop behind it, last longer (librdkafka's mock may leave a JoinGroup unanswered).
    rebalanceTimeout: sessionTimeoutMs,
    // kafkajs re-joins only when a heartbeat reports a rebalance: beat often so hand-overs are quick
    heartbeatInterval: Math.min(1_000, Math.floor(sessionTimeoutMs / 3)),
    // Upper bound on a fetch with nothing to return; brokers answer as soon as records arrive.
    maxWaitTimeInMs: 500,
  };
}

/**
 * A consumer group member on Kafka. kafkajs fetches and assigns partitions; this class hands
 * each fetched batch (cut to maxBatchRecords) to the handler and commits the offset after it
 * only once the handler resolved. Nothing is resolved or committed for a batch whose handler
 * threw, so kafkajs fetches it again from the last resolved offset.
 */
export class KafkaLogConsumer implements LogConsumer {
  private consumer: Consumer | undefined;
  private assigned: TopicPartition[] = [];
  private stopping = false;
  private running: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private ended: { resolve(): void } | undefined;
  /** What the last group join assigned (`assigned` is emptied while a crashed member joins again). */
  private joinedWith: TopicPartition[] = [];
  /** Seeks of the current assignment to the caller's start positions (options.startPosition). */
  private starting: Promise<void> = Promise.resolve();
  /** The current member's connect, subscribe and group join (kafkajs's run() resolves once joined). */
  private joining: Promise<void> = Promise.resolve();

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ConsumerOptions,
    private readonly settings: ConsumerSettings,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the consumer stopped (a member kafkajs gives up on is replaced by a new one). */
  run(handler: Handler): Promise<void> {
    this.running ??= this.start(handler);
    return this.running;
  }

  seek(topic: string, partition: number, offset: number): void {
    // kafkajs would drop a seek on a partition it does not hold without a word
    if (!this.consumer || !this.holds(topic, partition)) {
      throw new Error(`${topic}/${partition} is not assigned to this consumer`);
    }
    this.consumer.seek({ topic, partition, offset: String(offset) });
  }

  assignment(): TopicPartition[] {
    return [...this.assigned];
  }

  async commit(offsets: CommitOffset[]): Promise<void> {
    if (this.stopping) return;
    // Between generations (kafkajs gave the member up and a new one is joining) nothing is
    // held yet: say so, or the caller would take its positions for committed.
    if (!this.consumer || this.assigned.length === 0) throw new Error(`${this.options.groupId}: not a member of the group right now; commit again once it has joined`);
    const held = offsets.filter((o) => this.holds(o.topic, o.partition));
    if (held.length === 0) return;
    await this.consumer.commitOffsets(held.map(({ topic, partition, offset, metadata }) => ({ topic, partition, offset: String(offset), metadata: metadata ?? null })));
  }

  private holds(topic: string, partition: number): boolean {
    return this.assigned.some((a) => a.topic === topic && a.partition === partition);
  }

  /**
   * Leaves the group and resolves once the member is gone, or after the session timeout and
   * 10 s more. kafkajs's re-join after a rebalance retries inside its own loops (a JoinGroup the
   * broker leaves unanswered, or answers with an error, again and again), and its disconnect
   * waits for that: a stop waiting for it held a processors process past SIGTERM for minutes.
   * Past the bound the member is left to the group, which expires it after the session timeout;
   * the caller saved and committed what it had before stopping, so nothing is lost with it.
   */
  stop(): Promise<void> {
    this.stopping = true;
    this.stopped ??= (async () => {
      const left = this.leave();
      left.catch(() => undefined); // also once the bound has passed and nobody awaits it
      const boundMs = this.settings.sessionTimeout + 10_000;
      const inTime = await resolvesWithin(left, boundMs);
      if (!inTime) {
        this.logger.warn({ groupId: this.options.groupId, waitedMs: boundMs }, 'the member did not leave the group in time (kafkajs still joining, or waiting on the broker); stopped without it, and the group expires it after the session timeout');
      }
      this.assigned = [];
      this.ended?.resolve(); // run() resolves with it, also while a join goes on
      await this.running?.catch(() => undefined);
    })();
    return this.stopped;
  }

  /** Waits for a join in progress, then disconnects the member. */
  private async leave(): Promise<void> {
    // kafkajs cannot stop a member mid-join: its disconnect returns at once, forgets the
    // runner, and the runner starts fetching when the join completes, for good.
    await this.joining.catch(() => undefined);
    // kafkajs's disconnect waits for the batch in flight, whose commit happens inside it,
    // then leaves the group so the other members take the partitions over at once.
    await this.consumer?.disconnect();
  }

  private async start(handler: Handler): Promise<void> {
    const ended = new Promise<void>((resolve) => {
      this.ended = { resolve };
    });
    // A stop that gave up on a join in progress ends the run without it.
    await Promise.race([this.join(handler), ended]);
    return ended;
  }

  /**
   * Joins the group with a new kafkajs consumer. A broker may refuse a join mid-rebalance
   * with a non-retriable code (librdkafka's mock answers SyncGroup with INVALID_REQUEST),
   * which rejects run() or stops a running consumer for good: start over with a new member
   * after a pause, until stopped.
   */
  private async join(handler: Handler): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      const consumer = this.newConsumer(handler);
      this.consumer = consumer;
      this.joining = this.joinWith(consumer, handler);
      try {
        await this.joining;
        return;
      } catch {
        if (this.stopping) return;
        await consumer.disconnect().catch(() => undefined);
        await delay(Math.min(100 * 2 ** attempt, 5_000));
      }
    }
  }

  private async joinWith(consumer: Consumer, handler: Handler): Promise<void> {
    const ctx: BatchContext = { isStopping: () => this.stopping };
    await consumer.connect();
    await consumer.subscribe({ topics: this.options.topics, fromBeginning: this.options.fromBeginning ?? false });
    if (this.stopping) return;
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.deliver(payload, handler, ctx),
    });
  }

  private newConsumer(handler: Handler): Consumer {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      ...this.settings,
      // A crashed member is never restarted by kafkajs, whose restart joins the group where
      // stop() cannot reach it (see stop()) and keeps a client that may be broken (see
      // SharedClient): the CRASH listener below joins with a new member instead.
      retry: { restartOnFailure: async () => false },
      partitionAssigners: [
        this.options.exclusive
          ? exclusiveAssigner({ holds: () => this.assigned.length > 0, slot: this.options.exclusive.slot })
          : copartitionedAssigner(() => this.assigned.map((a) => a.partition)),
      ],
    });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      this.assigned = Object.entries(payload.memberAssignment).flatMap(([topic, partitions]) =>
        partitions.map((partition) => ({ topic, partition })),
      );
      // Against the last join, not the empty assignment a crash leaves: a member expired and
      // joining again with what it had has lost nothing.
      const revoked = this.joinedWith.filter((p) => !this.holds(p.topic, p.partition));
      this.joinedWith = this.assigned;
      if (revoked.length > 0) this.options.onRevoked?.(revoked);
      // A join that completes while the member leaves (kafkajs's disconnect waits for it)
      // starts nothing: the caller is stopping and may have closed what its start positions read.
      if (this.stopping) return;
      this.starting = this.seekToStart(consumer);
      this.starting.catch(() => undefined); // deliver() awaits it and fails the batch
    });
    consumer.on(consumer.events.CRASH, () => {
      // kafkajs left the group and gave this member up: a new member joins, and GROUP_JOIN says what it got
      this.assigned = [];
      if (this.stopping || this.consumer !== consumer) return;
      void delay(1_000).then(() => (this.stopping || this.consumer !== consumer ? undefined : this.join(handler)));
    });
    return consumer;
  }

  /**
   * Seeks every newly assigned partition to the caller's start position. kafkajs applies a
   * seek at its next fetch and marks batches fetched before it stale; deliver() waits for
   * these seeks, so no batch from the committed offset reaches the handler first.
   */
  private async seekToStart(consumer: Consumer): Promise<void> {
    const { startPosition } = this.options;
    if (!startPosition) return;
    for (const { topic, partition } of [...this.assigned]) {
      const offset = await startPosition(topic, partition);
      if (offset !== undefined && this.consumer === consumer && this.holds(topic, partition)) {
        consumer.seek({ topic, partition, offset: String(offset) });
      }
    }
  }

  private async deliver(payload: EachBatchPayload, handler: Handler, ctx: BatchContext): Promise<void> {
    const { batch, resolveOffset, commitOffsetsIfNecessary, heartbeat, isRunning, isStale } = payload;
    try {
      await this.starting;
    } catch (err) {
      this.starting = this.seekToStart(this.consumer!);
      this.starting.catch(() => undefined);
      throw err;
    }
    if (isStale()) return;
    const size = Math.max(1, this.options.maxBatchRecords ?? batch.messages.length);
    for (let start = 0; start < batch.messages.length; start += size) {
      const messages = batch.messages.slice(start, start + size);
      // A handler may work for longer than the session timeout (a processor through a large
      // backlog): keep the membership alive meanwhile; a re-balance shows at the beat below.
      const beating = setInterval(() => void heartbeat().catch(() => undefined), this.settings.heartbeatInterval);
      try {
        await handler(
          {
            topic: batch.topic,
            partition: batch.partition,
            records: messages.map((m) => toLogRecord(batch.topic, batch.partition, m)),
          },
          ctx,
        );
      } finally {
        clearInterval(beating);
      }
      // A seek from the handler replaces this position: kafkajs applies it on the next fetch.
      if (isStale()) return;
      const last = messages[messages.length - 1].offset;
      resolveOffset(last);
      // Committed through kafkajs's group directly (consumer.commitOffsets skips the commit
      // once the consumer is stopping) and before the heartbeat that may report a rebalance:
      // Kafka accepts the old generation's commit while the group prepares to re-balance, so
      // a revoked partition's next owner starts after this batch. (librdkafka's mock refuses
      // it; the batch then goes to the next owner again: at least once, never lost.)
      if (this.options.autoCommit !== false) {
        await commitOffsetsIfNecessary({
          topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(BigInt(last) + 1n) }] }],
        });
      }
      if (!isRunning() || this.stopping) return;
      await heartbeat();
    }
  }
}
