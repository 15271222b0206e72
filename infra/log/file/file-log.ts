import { EventEmitter } from 'node:events';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BroadcastChannel } from 'node:worker_threads';
import { writeFileAtomic } from '../../fs/atomic-write.ts';
import { ProcessLock } from '../../fs/process-lock.ts';
import type { Logger } from '../../logging.ts';
import { partitionForKey } from '../partitioner.ts';
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
  TopicPartition,
} from '../port.ts';
import type { TopicSpec } from '../../../schemas/catalogue.ts';
import { cleanPartition } from './cleaner.ts';
import { readMembers } from './group-member.ts';
import { readGroupOffsets } from './group-offsets.ts';
import { FileLogConsumer, partitionKey } from './file-consumer.ts';
import { toLogRecord, type EncodableRecord } from './record-format.ts';
import { ReaderCache } from './reader-cache.ts';
import { listSegments, PartitionEnd, PartitionWriter } from './segments.ts';

export interface FileLogOptions {
  /** The data dir; the log lives in `<dir>/log`. */
  dir: string;
  /** `always`: an append resolves after fdatasync; `never`: after the write (survives a process crash, not a power cut). */
  fsync: 'always' | 'never';
  segmentBytes: number;
  logger: Logger;
  /**
   * How often a consumer looks at every partition it holds, for records appended by other
   * processes (appends in this process wake the consumers of their partitions at once).
   */
  pollIntervalMs?: number;
}

interface PendingAppend {
  topic: string;
  records: { partition: number; record: EncodableRecord }[];
  resolve(results: AppendResult[]): void;
  reject(err: Error): void;
}

/**
 * The embedded mode's event log: append-only segment files per topic-partition in the
 * data dir. Appends from every process on the machine are serialised by one process lock;
 * appends within this process are group-committed (one write and one fdatasync per
 * partition for everything queued while the previous commit ran).
 */
export class FileEventLog implements EventLog {
  readonly kind = 'embedded';
  private readonly root: string;
  private readonly lock: ProcessLock;
  private readonly topics = new Map<string, TopicSpec>();
  private readonly writers = new Map<string, PartitionWriter>();
  private readonly ends = new Map<string, PartitionEnd>();
  private readonly readers = new ReaderCache();
  private readonly roundRobin = new Map<string, number>();
  private pending: PendingAppend[] = [];
  private flushing: Promise<void> | undefined;
  /**
   * Emits 'append' with the partitions (TopicPartition[]) of each commit, here or in another
   * thread of this process, so the consumers holding them wake at once and no other does.
   */
  readonly appended = new EventEmitter();
  /** Tells the logs of the same directory in other threads (a role on a worker thread) of each commit. */
  private readonly commits: BroadcastChannel;

  private constructor(readonly options: FileLogOptions) {
    this.root = join(options.dir, 'log');
    this.lock = new ProcessLock(this.root);
    this.appended.setMaxListeners(0);
    this.commits = new BroadcastChannel(`tqa-file-log:${this.root}`);
    this.commits.onmessage = (message) => this.appended.emit('append', (message as { data: TopicPartition[] }).data);
    // Listening must not keep a process alive that is otherwise done.
    this.commits.unref();
  }

  static async open(options: FileLogOptions): Promise<FileEventLog> {
    await mkdir(join(options.dir, 'log', '_groups'), { recursive: true });
    return new FileEventLog(options);
  }

  partitionDir(topic: string, partition: number): string {
    return join(this.root, topic, String(partition));
  }

  groupFile(groupId: string): string {
    return join(this.root, '_groups', `${encodeURIComponent(groupId)}.json`);
  }

  get pollIntervalMs(): number {
    return this.options.pollIntervalMs ?? 500;
  }

  async ensureTopics(specs: TopicSpec[]): Promise<void> {
    await this.lock.withLock(async () => {
      for (const spec of specs) {
        if (await this.readSpec(spec.name)) continue;
        const dir = join(this.root, spec.name);
        await mkdir(dir, { recursive: true });
        for (let p = 0; p < spec.partitions; p++) await mkdir(join(dir, String(p)), { recursive: true });
        await writeFileAtomic(join(dir, 'topic.json'), JSON.stringify(spec, null, 1));
        this.topics.set(spec.name, spec);
      }
    });
  }

  async topicSpec(topic: string): Promise<TopicSpec> {
    const spec = this.topics.get(topic) ?? (await this.readSpec(topic));
    if (!spec) throw new Error(`unknown topic ${topic}`);
    return spec;
  }

  async append(topic: string, records: OutgoingRecord[]): Promise<AppendResult[]> {
    const spec = await this.topicSpec(topic);
    const now = Date.now();
    const outside = records.find((r) => r.partition !== undefined && !(Number.isInteger(r.partition) && r.partition >= 0 && r.partition < spec.partitions));
    if (outside) throw new Error(`${topic} has no partition ${outside.partition} (it has ${spec.partitions})`);
    const placed = records.map((r) => ({
      partition: r.partition ?? (r.key === null ? this.nextRoundRobin(topic, spec.partitions) : partitionForKey(r.key, spec.partitions)),
      record: { key: r.key, value: r.value, timestamp: r.timestamp ?? now, headers: r.headers },
    }));
    const done = new Promise<AppendResult[]>((resolve, reject) => {
      this.pending.push({ topic, records: placed, resolve, reject });
    });
    this.flushing ??= this.flushLoop();
    return done;
  }

  async read(topic: string, partition: number, offset: number, max: number): Promise<LogRecord[]> {
    return (await this.readers.read(this.partitionDir(topic, partition), offset, max)).map((r) => toLogRecord(r, topic, partition));
  }

  async startOffsets(topic: string): Promise<PartitionOffset[]> {
    const spec = await this.topicSpec(topic);
    return Promise.all(
      range(spec.partitions).map(async (partition) => ({
        partition,
        offset: (await listSegments(this.partitionDir(topic, partition)))[0] ?? 0,
      })),
    );
  }

  /** Read without the lock (PartitionEnd): a reader of ends does not wait for appends in progress. */
  async endOffsets(topic: string): Promise<PartitionOffset[]> {
    const spec = await this.topicSpec(topic);
    return Promise.all(
      range(spec.partitions).map(async (partition) => {
        const id = partitionKey({ topic, partition });
        let end = this.ends.get(id);
        if (!end) this.ends.set(id, (end = new PartitionEnd(this.partitionDir(topic, partition))));
        return { partition, offset: await end.read() };
      }),
    );
  }

  async committedOffsets(groupId: string, topic: string): Promise<CommittedOffset[]> {
    const { offsets, metadata } = await readGroupOffsets(this.groupFile(groupId));
    return Object.entries(offsets[topic] ?? {}).map(([partition, offset]) => ({
      partition: Number(partition),
      offset,
      metadata: metadata[topic]?.[partition] ?? null,
    }));
  }

  async listGroups(): Promise<string[]> {
    const names = await readdir(join(this.root, '_groups'));
    return names.filter((n) => n.endsWith('.json')).map((n) => decodeURIComponent(n.slice(0, -5)));
  }

  groupMembers(groupId: string): Promise<GroupMember[]> {
    return readMembers(this.groupFile(groupId));
  }

  async listTopics(): Promise<string[]> {
    const names = await readdir(this.root);
    const specs = await Promise.all(names.map((n) => this.readSpec(n)));
    return specs.filter((s): s is TopicSpec => s !== undefined).map((s) => s.name);
  }

  consumer(options: ConsumerOptions): LogConsumer {
    return new FileLogConsumer(this, options, this.options.logger);
  }

  async close(): Promise<void> {
    await this.flushing;
    this.commits.close();
    await Promise.all([...this.writers.values(), ...this.ends.values(), this.readers].map((w) => w.close()));
    this.writers.clear();
    this.ends.clear();
  }

  private async flushLoop(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        const groups = byPartition(batch);
        try {
          const results = await this.lock.withLock(() => this.commit(batch, groups));
          batch.forEach((append, i) => append.resolve(results[i]));
        } catch (err) {
          for (const append of batch) append.reject(err as Error);
        }
        // A failed commit may have written some of its partitions: their consumers look too.
        const touched = groups.map(({ topic, partition }): TopicPartition => ({ topic, partition }));
        this.appended.emit('append', touched);
        this.commits.postMessage(touched);
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Writes a group of appends, its records grouped by partition (`groups`); runs under the process lock. */
  private async commit(batch: PendingAppend[], groups: PartitionGroup[]): Promise<AppendResult[][]> {
    const results: AppendResult[][] = batch.map((append) => new Array(append.records.length));
    // The partitions are written side by side: each step waits for the file system and then
    // for a turn of the event loop, which a busy process gives seldom.
    const writers = await Promise.all(
      groups.map(async (group) => {
        const writer = this.writer(group.topic, group.partition);
        await writer.refresh();
        const offsets = await writer.append(group.records);
        group.slots.forEach(([a, r], i) => (results[a][r] = { partition: group.partition, offset: offsets[i] }));
        return writer;
      }),
    );
    for (const [i, writer] of writers.entries()) {
      const { topic, partition } = groups[i];
      if (writer.rolled) await cleanPartition(this.partitionDir(topic, partition), await this.topicSpec(topic), Date.now());
    }
    if (this.options.fsync === 'always') await Promise.all(writers.map((w) => w.sync()));
    return results;
  }

  private writer(topic: string, partition: number): PartitionWriter {
    const id = partitionKey({ topic, partition });
    let writer = this.writers.get(id);
    if (!writer) {
      writer = new PartitionWriter(this.partitionDir(topic, partition), this.options.segmentBytes, this.options.logger);
      this.writers.set(id, writer);
    }
    return writer;
  }

  private nextRoundRobin(topic: string, partitions: number): number {
    const next = this.roundRobin.get(topic) ?? 0;
    this.roundRobin.set(topic, next + 1);
    return next % partitions;
  }

  private async readSpec(topic: string): Promise<TopicSpec | undefined> {
    try {
      const spec = JSON.parse(await readFile(join(this.root, topic, 'topic.json'), 'utf8')) as TopicSpec;
      this.topics.set(topic, spec);
      return spec;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
      throw err;
    }
  }
}

/** The records of a group of appends by partition, each with its place (append, record) in the group. */
interface PartitionGroup {
  topic: string;
  partition: number;
  records: EncodableRecord[];
  slots: [number, number][];
}

function byPartition(batch: PendingAppend[]): PartitionGroup[] {
  const groups = new Map<string, PartitionGroup>();
  batch.forEach((append, a) => {
    append.records.forEach(({ partition, record }, r) => {
      const id = partitionKey({ topic: append.topic, partition });
      let group = groups.get(id);
      if (!group) groups.set(id, (group = { topic: append.topic, partition, records: [], slots: [] }));
      group.records.push(record);
      group.slots.push([a, r]);
    });
  });
  return [...groups.values()];
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
