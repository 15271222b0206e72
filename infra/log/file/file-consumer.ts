import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ProcessLock } from '../../fs/process-lock.ts';
import type { Logger } from '../../logging.ts';
import type { Batch, BatchContext, CommitOffset, ConsumerOptions, LogConsumer, TopicPartition } from '../port.ts';
import type { FileEventLog } from './file-log.ts';
import { forgetMember, recordMember } from './group-member.ts';
import { readGroupOffsets, writeGroupOffsets, type GroupOffsets } from './group-offsets.ts';
import { PartitionReader } from './segments.ts';
import { toLogRecord } from './record-format.ts';

const DEFAULT_MAX_BATCH = 2000;
const MAX_RETRY_DELAY_MS = 5000;

interface Assigned {
  topic: string;
  partition: number;
  reader: PartitionReader;
}

/**
 * A consumer group member on the file log. A group has one active member on the machine:
 * the member holds the group's process lock while it runs and owns every partition; a
 * second member of the same group waits as a standby until the first stops or dies.
 */
export class FileLogConsumer implements LogConsumer {
  private assigned: Assigned[] = [];
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
  }

  assignment(): TopicPartition[] {
    return this.assigned.map(({ topic, partition }) => ({ topic, partition }));
  }

  async commit(offsets: CommitOffset[]): Promise<void> {
    // Only the member holding the group's lock writes its offsets: a standby holds nothing.
    const held = offsets.filter((o) => this.assigned.some((a) => a.topic === o.topic && a.partition === o.partition));
    if (held.length === 0) return;
    for (const { topic, partition, offset, metadata } of held) {
      (this.offsets.offsets[topic] ??= {})[partition] = offset;
      if (metadata === undefined) delete this.offsets.metadata[topic]?.[partition];
      else (this.offsets.metadata[topic] ??= {})[partition] = metadata;
    }
    await writeGroupOffsets(this.log.groupFile(this.options.groupId), this.offsets);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.stopController.abort();
    await this.running?.catch(() => undefined);
  }

  private async loop(handler: (batch: Batch, ctx: BatchContext) => Promise<void>): Promise<void> {
    const groupFile = this.log.groupFile(this.options.groupId);
    await mkdir(dirname(groupFile), { recursive: true });
    let release: () => Promise<void>;
    try {
      release = await new ProcessLock(groupFile).hold(this.stopController.signal);
    } catch (err) {
      if (this.stopping) return;
      throw err;
    }
    try {
      this.offsets = await readGroupOffsets(groupFile);
      await this.assign();
      await recordMember(groupFile, this.assignment());
      const ctx: BatchContext = { isStopping: () => this.stopping };
      const maxRecords = this.options.maxBatchRecords ?? DEFAULT_MAX_BATCH;
      let failures = 0;
      while (!this.stopping) {
        let delivered = 0;
        for (const entry of this.assigned) {
          if (this.stopping) break;
          const from = entry.reader.position;
          const records = await entry.reader.read(maxRecords);
          if (records.length === 0) continue;
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
            await this.pause(Math.min(50 * 2 ** failures, MAX_RETRY_DELAY_MS));
            continue;
          }
          delivered += records.length;
          if (this.options.autoCommit !== false) {
            await this.commit([{ topic: entry.topic, partition: entry.partition, offset: entry.reader.position }]);
          }
        }
        if (delivered === 0) await this.waitForRecords();
      }
    } finally {
      const readers = this.assigned;
      this.assigned = [];
      await Promise.all(readers.map((a) => a.reader.close()));
      await forgetMember(groupFile);
      await release();
    }
  }

  private async assign(): Promise<void> {
    for (const topic of this.options.topics) {
      const spec = await this.log.topicSpec(topic);
      const ends = this.options.fromBeginning ? undefined : await this.log.endOffsets(topic);
      for (let partition = 0; partition < spec.partitions; partition++) {
        const resumeAt = await this.options.startPosition?.(topic, partition);
        const start = resumeAt ?? this.offsets.offsets[topic]?.[partition] ?? ends?.[partition].offset ?? 0;
        this.assigned.push({ topic, partition, reader: new PartitionReader(this.log.partitionDir(topic, partition), start) });
      }
    }
  }

  /** Waits for an append in this process, the poll interval (appends by other processes) or stop. */
  private async waitForRecords(): Promise<void> {
    const wake = new AbortController();
    const timer = setTimeout(() => wake.abort(), this.log.pollIntervalMs);
    try {
      await once(this.log.appended, 'append', { signal: AbortSignal.any([wake.signal, this.stopController.signal]) });
    } catch {
      // woken by the timer or by stop
    } finally {
      clearTimeout(timer);
    }
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
