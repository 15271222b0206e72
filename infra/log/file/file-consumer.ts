import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ProcessLock } from '../../fs/process-lock.ts';
import type { Logger } from '../../logging.ts';
import { inShare, type Batch, type BatchContext, type CommitOffset, type ConsumerOptions, type LogConsumer, type TopicPartition } from '../port.ts';
import type { FileEventLog } from './file-log.ts';
import { forgetMember, recordMember } from './group-member.ts';
import { readGroupOffsets, writeGroupOffsets, type GroupOffsets } from './group-offsets.ts';
import { PartitionReader } from './segments.ts';
import { toLogRecord } from './record-format.ts';

/** A topic-partition as one Map key. */
export const partitionKey = ({ topic, partition }: TopicPartition): string => `${topic}\u0000${partition}`;

const DEFAULT_MAX_BATCH = 2000;
const MAX_RETRY_DELAY_MS = 5000;

interface Assigned {
  topic: string;
  partition: number;
  reader: PartitionReader;
}

/**
 * A consumer group member on the file log. Without a share, a group has one active member on
 * the machine: the member holds the group's process lock while it runs and owns every
 * partition; a second member of the same group waits as a standby until the first stops or
 * dies. With a share (ConsumerOptions.share) a member holds a lock per partition of its share,
 * so members of other shares run beside it and a second member of a partition waits for it.
 */
export class FileLogConsumer implements LogConsumer {
  private assigned: Assigned[] = [];
  /**
   * The assigned partitions to read next: those appended to in this process since they were
   * last read to their end, all of them at each poll interval (appends by other processes),
   * and any that was sought. Reading only these keeps an idle consumer from reading every
   * partition it holds at each append anywhere in the process.
   */
  private readonly due = new Set<Assigned>();
  /** Ends the wait for records, set while the loop waits. */
  private wake: (() => void) | undefined;
  private stopping = false;
  private readonly stopController = new AbortController();
  private running: Promise<void> | undefined;
  private offsets: GroupOffsets = { offsets: {}, metadata: {} };

  constructor(
    private readonly log: FileEventLog,
    private readonly options: ConsumerOptions,
    private readonly logger: Logger,
  ) {}

  run(handler: (batch: Batch, ctx: BatchContext) => Promise<void>): Promise<void> {
    this.running ??= this.loop(handler);
    return this.running;
  }

  seek(topic: string, partition: number, offset: number): void {
    const entry = this.assigned.find((a) => a.topic === topic && a.partition === partition);
    if (!entry) throw new Error(`${topic}/${partition} is not assigned to this consumer`);
    entry.reader.seek(offset);
    this.markDue([entry]);
  }

  assignment(): TopicPartition[] {
    return this.assigned.map(({ topic, partition }) => ({ topic, partition }));
  }

  async commit(offsets: CommitOffset[]): Promise<void> {
    // Only the member holding the group's lock writes its offsets: a standby holds nothing.
    const held = offsets.filter((o) => this.assigned.some((a) => a.topic === o.topic && a.partition === o.partition));
    if (held.length === 0) return;
    const groupFile = this.log.groupFile(this.options.groupId);
    if (!this.options.share) {
      // The only member: what it read at the start plus its own commits is the whole file.
      setOffsets(this.offsets, held);
      await writeGroupOffsets(groupFile, this.offsets);
      return;
    }
    // Members of other shares write the same file: each replaces its own partitions only.
    await new ProcessLock(`${groupFile}.commit`).withLock(async () => {
      const current = await readGroupOffsets(groupFile);
      setOffsets(current, held);
      await writeGroupOffsets(groupFile, current);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.stopController.abort();
    await this.running?.catch(() => undefined);
  }

  private async loop(handler: (batch: Batch, ctx: BatchContext) => Promise<void>): Promise<void> {
    const groupFile = this.log.groupFile(this.options.groupId);
    await mkdir(dirname(groupFile), { recursive: true });
    const partitions = await this.partitionsToHold();
    const locks = this.options.share ? partitions.map((p) => `${groupFile}#p${p}`) : [groupFile];
    const releases: (() => Promise<void>)[] = [];
    const release = async () => {
      for (const r of releases.splice(0).reverse()) await r();
    };
    try {
      // In ascending order, so members waiting for partitions they share never wait in a circle.
      for (const lock of locks) releases.push(await new ProcessLock(lock).hold(this.stopController.signal));
    } catch (err) {
      await release();
      if (this.stopping) return;
      throw err;
    }
    const memberLock = locks[0];
    let onAppend: ((touched: TopicPartition[]) => void) | undefined;
    try {
      this.offsets = await readGroupOffsets(groupFile);
      await this.assign(partitions);
      const byPartition = new Map(this.assigned.map((entry) => [partitionKey(entry), entry]));
      onAppend = (touched: TopicPartition[]) => this.markDue(touched.flatMap((tp) => byPartition.get(partitionKey(tp)) ?? []));
      this.log.appended.on('append', onAppend);
      if (memberLock !== undefined) await recordMember(memberLock, this.assignment());
      const ctx: BatchContext = { isStopping: () => this.stopping };
      const maxRecords = this.options.maxBatchRecords ?? DEFAULT_MAX_BATCH;
      let failures = 0;
      let polledAt = -Infinity;
      while (!this.stopping) {
        const polling = performance.now() - polledAt >= this.log.pollIntervalMs;
        if (polling) {
          polledAt = performance.now();
          for (const entry of this.assigned) this.due.add(entry);
        }
        // In assignment order, as a poll of every partition reads them.
        const reading = this.assigned.filter((entry) => this.due.has(entry));
        this.due.clear();
        for (const entry of reading) {
          if (this.stopping) break;
          const from = entry.reader.position;
          const records = await entry.reader.read(maxRecords, polling);
          if (records.length === 0) continue;
          // A full batch may not be the partition's end.
          if (records.length === maxRecords) this.due.add(entry);
          const batch: Batch = {
            topic: entry.topic,
            partition: entry.partition,
            records: records.map((r) => toLogRecord(r, entry.topic, entry.partition)),
          };
          try {
            await handler(batch, ctx);
            failures = 0;
          } catch (err) {
            failures++;
            this.logger.error({ err, topic: entry.topic, partition: entry.partition, from }, 'batch handler failed; redelivering');
            entry.reader.seek(from);
            this.due.add(entry);
            await this.pause(Math.min(50 * 2 ** failures, MAX_RETRY_DELAY_MS));
            continue;
          }
          if (this.options.autoCommit !== false) {
            // A commit that fails (a full disk) is made with the partition's next batch; until then
            // a restart delivers this batch again, as at-least-once delivery allows.
            await this.commit([{ topic: entry.topic, partition: entry.partition, offset: entry.reader.position }]).catch((err: unknown) =>
              this.logger.warn({ err, topic: entry.topic, partition: entry.partition }, 'offset commit failed; made again with the next batch'),
            );
          }
        }
        if (this.due.size === 0) await this.waitForRecords(polledAt + this.log.pollIntervalMs - performance.now());
      }
    } finally {
      if (onAppend !== undefined) this.log.appended.off('append', onAppend);
      this.due.clear();
      const readers = this.assigned;
      this.assigned = [];
      await Promise.all(readers.map((a) => a.reader.close()));
      if (memberLock !== undefined) await forgetMember(memberLock);
      await release();
    }
  }

  /** The partition numbers this member takes, over every topic: all of them, or its share's. */
  private async partitionsToHold(): Promise<number[]> {
    let most = 0;
    for (const topic of this.options.topics) most = Math.max(most, (await this.log.topicSpec(topic)).partitions);
    return Array.from({ length: most }, (_, p) => p).filter((p) => inShare(p, this.options.share));
  }

  private async assign(partitions: number[]): Promise<void> {
    for (const topic of this.options.topics) {
      const spec = await this.log.topicSpec(topic);
      const ends = this.options.fromBeginning ? undefined : await this.log.endOffsets(topic);
      for (const partition of partitions.filter((p) => p < spec.partitions)) {
        const resumeAt = await this.options.startPosition?.(topic, partition);
        const start = resumeAt ?? this.offsets.offsets[topic]?.[partition] ?? ends?.[partition].offset ?? 0;
        this.assigned.push({ topic, partition, reader: new PartitionReader(this.log.partitionDir(topic, partition), start) });
      }
    }
  }

  private markDue(entries: Assigned[]): void {
    if (entries.length === 0) return;
    for (const entry of entries) this.due.add(entry);
    this.wake?.();
  }

  /** Waits until a held partition is appended to in this process, `ms` pass (the next poll) or stop. */
  private waitForRecords(ms: number): Promise<void> {
    const signal = this.stopController.signal;
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(ms, 0));
      signal.addEventListener('abort', done);
      this.wake = done;
    });
  }

  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.stopController.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

function setOffsets(file: GroupOffsets, commits: CommitOffset[]): void {
  for (const { topic, partition, offset, metadata } of commits) {
    (file.offsets[topic] ??= {})[partition] = offset;
    if (metadata === undefined) delete file.metadata[topic]?.[partition];
    else (file.metadata[topic] ??= {})[partition] = metadata;
  }
}
