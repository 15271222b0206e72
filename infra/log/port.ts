/**
 * The event log port. Two adapters implement it: the durable file log of the embedded
 * mode (infra/log/file) and Kafka (infra/log/kafka). Nothing above this port knows which
 * one it runs on; test/contract/log.contract.ts holds both to the same behaviour.
 */

import type { TopicSpec } from '../../schemas/catalogue.ts';

export type Headers = Record<string, string>;

/** A record to append. A null value on a compacted topic is a tombstone for its key. */
export interface OutgoingRecord {
  key: string | null;
  value: Buffer | null;
  /** Event time in epoch milliseconds; defaults to the time of the append. */
  timestamp?: number;
  headers?: Headers;
  /** The partition to append to, in place of the one the key gives (a task's changelog goes to the task's partition). */
  partition?: number;
}

export interface LogRecord {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: Buffer | null;
  timestamp: number;
  headers: Headers;
}

export interface AppendResult {
  partition: number;
  offset: number;
}

export interface PartitionOffset {
  partition: number;
  offset: number;
}

/** An offset a consumer group commits, with what the committer says of it (Kafka's commit metadata). */
export interface CommitOffset extends PartitionOffset {
  topic: string;
  metadata?: string;
}

/** A group's committed offset of a partition, with the metadata committed with it (null: none). */
export interface CommittedOffset extends PartitionOffset {
  metadata: string | null;
}

export interface Batch {
  topic: string;
  partition: number;
  records: LogRecord[];
}

export interface ConsumerOptions {
  groupId: string;
  topics: string[];
  /** Where a partition without a committed offset starts: its first record or its end. */
  fromBeginning?: boolean;
  /** Upper bound on records handed to one batch call. */
  maxBatchRecords?: number;
  /**
   * `true` (default): the offset after a batch is committed once its handler resolved.
   * `false`: the consumer never commits by itself; the caller commits with commit() what its
   * own durable state covers (a processor, whose handler only queues records for its merge).
   */
  autoCommit?: boolean;
  /**
   * Where a partition newly assigned to this member starts, in place of the group's
   * committed offset: a caller that checkpoints its own positions resumes from them, so
   * nothing between the checkpoint and a newer commit is skipped. Undefined: the committed offset.
   */
  startPosition?(topic: string, partition: number): Promise<number | undefined>;
  /**
   * One member of the group holds every partition and the others wait as standbys, for a
   * processor whose one task reads them all. (The file log's groups are always so.)
   * `slot`: which process holds it, where the group has members in several (Kafka): the
   * slot-th of them in a fixed order, modulo their count. Groups given different slots
   * spread over the processes instead of all going to one.
   */
  exclusive?: { slot: number };
  /**
   * This member's share of the partitions: those p with p % count === index, so that `count`
   * members (threads of one process) split a partition-keyed group between them. The file
   * log needs it, having no coordinator to balance a group; a second member of a partition
   * waits as a standby. Kafka's group coordinator balances its members, and ignores it.
   */
  share?: PartitionShare;
  /**
   * Called after a re-balance gave partitions this member held to another member (Kafka): a
   * caller that keeps state per partition drops it. Not called when a member joins again with
   * the partitions it had, nor on stop.
   */
  onRevoked?(partitions: TopicPartition[]): void;
}

export interface PartitionShare {
  index: number;
  count: number;
}

export function inShare(partition: number, share: PartitionShare | undefined): boolean {
  return share === undefined || partition % share.count === share.index;
}

export interface BatchContext {
  /** True once stop() was called: finish the batch and return. */
  isStopping(): boolean;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

/**
 * One member of a consumer group. `run` hands batches of one partition at a time to the
 * handler, in offset order, and commits the offset after the last record of a batch only
 * once the handler's promise resolved: a handler that throws has its batch delivered again.
 */
export interface LogConsumer {
  run(handler: (batch: Batch, ctx: BatchContext) => Promise<void>): Promise<void>;
  /** Next records delivered for this partition start at `offset`. Valid once run() started. */
  seek(topic: string, partition: number, offset: number): void;
  /** Partitions currently assigned to this member. */
  assignment(): TopicPartition[];
  /**
   * Commits next offsets for partitions this member holds (others are skipped), for
   * `autoCommit: false`. Skipped once stopping; rejects when the group refuses it (Kafka,
   * re-balancing). A commit not made leaves the committed offset behind, never ahead.
   */
  commit(offsets: CommitOffset[]): Promise<void>;
  /** Resolves when the current batch is done, its offset committed and consumption stopped. */
  stop(): Promise<void>;
}

/** A running member of a consumer group and the partitions assigned to it. */
export interface GroupMember {
  /** Who it is: host, process and thread on the file log; member id and client host on Kafka. */
  member: string;
  partitions: TopicPartition[];
}

export interface EventLog {
  readonly kind: 'embedded' | 'kafka';
  /** Creates missing topics; existing ones are left as they are. */
  ensureTopics(specs: TopicSpec[]): Promise<void>;
  /**
   * Appends records; partition chosen by key (murmur2 as Kafka's default partitioner) or
   * round-robin without a key. Resolves once the records are durable: acknowledged records
   * survive a crash of this process.
   */
  append(topic: string, records: OutgoingRecord[]): Promise<AppendResult[]>;
  consumer(options: ConsumerOptions): LogConsumer;
  /** Reads up to `max` records of one partition from `offset` without a consumer group. */
  read(topic: string, partition: number, offset: number, max: number): Promise<LogRecord[]>;
  /** Offset of the first retained record of each partition. */
  startOffsets(topic: string): Promise<PartitionOffset[]>;
  /** Offset the next appended record will get, for each partition (the high watermark). */
  endOffsets(topic: string): Promise<PartitionOffset[]>;
  /** Committed offsets of a group on a topic; partitions never committed are left out. */
  committedOffsets(groupId: string, topic: string): Promise<CommittedOffset[]>;
  listGroups(): Promise<string[]>;
  /** The group's running members and what each holds: [] when none runs, null when the log cannot tell. */
  groupMembers(groupId: string): Promise<GroupMember[] | null>;
  listTopics(): Promise<string[]>;
  close(): Promise<void>;
}
