import { randomUUID } from 'node:crypto';
import type { EventLog, LogRecord, OutgoingRecord } from '../../../infra/log/port.ts';
import { catalogueTopic, type TopicSpec } from '../../../schemas/catalogue.ts';
import type { Processor } from '../processor.ts';
import { decodeStateValue, encodeStateValue } from './encoding.ts';
import { TaskTakenOverError, type StateChange, type TaskPosition, type TaskStateStore } from './task-store.ts';

/**
 * A keyed processor's changelog, as Kafka Streams keeps one per store: a compacted topic with
 * a partition per task, to which every checkpoint appends the keys it changed (the same bytes
 * as the task's store file) and then a commit record with the input positions they cover, in
 * one append (one record batch, which Kafka appends whole). A process that takes a task brings
 * its store up to date from there, from its own last position or from offset 0 when it has no
 * store, so state moves between processes without a shared volume.
 *
 * Holders: a process taking a task first appends a claim; the claim's offset is its holder
 * number, which each of its records carries. A restore skips records of a holder older than the
 * newest claim met so far: a process paused past its group's timeout that goes on writing for
 * a moment is fenced out, and its own next append sees the newer claim and stops it.
 */

const CLAIM_KEY = '\u0001claim';
const COMMIT_KEY = '\u0001commit';
const HOLDER_HEADER = 'holder';
const RESTORE_READ_RECORDS = 5_000;

interface CommitRecord {
  positions: Record<string, number>;
  /** null for -Infinity. */
  maxEventTime: number | null;
}

/**
 * The changelog topic of a keyed processor: one partition per task, compacted, kept for good.
 * A new state version starts a new one, as it starts a new state.
 */
export function changelogTopic(processor: Processor<unknown>): TopicSpec {
  const tasks = processor.parallelism === 'single' ? 1 : (catalogueTopic(processor.inputs[0])?.partitions ?? 1);
  return { name: `state.${processor.name}.v${processor.stateVersion}.changelog`, partitions: tasks, cleanupPolicy: 'compact', retentionMs: -1, retentionBytes: -1 };
}

export class TaskChangelog {
  /** The offset of this process's claim on the task; -1 until it took the task. */
  private holder = -1;
  /** The changelog offset after the last record this process knows of. */
  private next = 0;

  constructor(
    private readonly log: EventLog,
    private readonly topic: TopicSpec,
    private readonly task: number,
  ) {}

  /**
   * Takes the task (after the store took it locally): claims it, then writes into the store
   * what the changelog holds past the store's position, up to the claim. Returns how many
   * records it read.
   */
  async take(store: TaskStateStore): Promise<{ restoredRecords: number }> {
    await this.log.ensureTopics([this.topic]);
    let from = store.changelogPosition();
    // A store that never followed the changelog (it was kept with the embedded log) may be
    // ahead of or behind it: the changelog is the state that moves, so it starts from there.
    if (!from && store.position() !== undefined) store.clear();
    from ??= { next: 0, fence: -1 };
    const [claim] = await this.log.append(this.topic.name, [{ key: CLAIM_KEY, value: Buffer.from(randomUUID()), partition: this.task }]);
    this.holder = claim.offset;

    const changes = new Map<string, Buffer | null>();
    let position: TaskPosition | undefined;
    let fence = from.fence;
    let offset = from.next;
    let restoredRecords = 0;
    while (offset < claim.offset) {
      const records = await this.log.read(this.topic.name, this.task, offset, RESTORE_READ_RECORDS);
      if (records.length === 0) break;
      for (const record of records) {
        if (record.offset >= claim.offset) break;
        restoredRecords++;
        const holder = holderOf(record);
        if (record.key === CLAIM_KEY) fence = Math.max(fence, record.offset);
        else if (holder < fence) continue; // fenced out by a newer claim
        else if (record.key === COMMIT_KEY) position = positionOf(record.value!);
        else if (record.key !== null) changes.set(record.key, record.value);
        fence = Math.max(fence, holder);
      }
      offset = records.at(-1)!.offset + 1;
    }
    store.restore(
      [...changes].map(([key, bytes]) => ({ key, bytes })),
      position,
      { next: claim.offset + 1, fence: claim.offset },
    );
    this.next = claim.offset + 1;
    return { restoredRecords };
  }

  /**
   * Appends a checkpoint's changes and position. Another process's records met between this
   * one's last append and this one: a newer claim means the task was taken from this process
   * (TaskTakenOverError, and nothing is committed here); records of an older holder are
   * written over with this holder's values, so that compaction cannot leave theirs as the last.
   */
  async append(changes: StateChange[], position: TaskPosition, committedBytes: (key: string) => Buffer | null): Promise<{ next: number; fence: number }> {
    if (this.holder < 0) throw new Error(`changelog ${this.topic.name} of task ${this.task} appended before the task was taken`);
    const appended = await this.log.append(this.topic.name, this.batch(changes, position));
    const first = appended[0].offset;
    if (first > this.next) {
      const written = new Map(changes.map((c) => [c.key, c.bytes]));
      const overwrite = new Set<string>();
      for (let offset = this.next; offset < first; ) {
        const records = await this.log.read(this.topic.name, this.task, offset, RESTORE_READ_RECORDS);
        if (records.length === 0) break;
        for (const record of records) {
          if (record.offset >= first) break;
          if (record.key === CLAIM_KEY && record.offset > this.holder) {
            throw new TaskTakenOverError(`another process claimed task ${this.task} in ${this.topic.name} at offset ${record.offset}`);
          }
          if (record.key !== null && record.key !== CLAIM_KEY && record.key !== COMMIT_KEY) overwrite.add(record.key);
        }
        offset = records.at(-1)!.offset + 1;
      }
      if (overwrite.size > 0) {
        const mine = [...overwrite].map((key) => ({ key, bytes: written.has(key) ? written.get(key)! : committedBytes(key) }));
        appended.push(...(await this.log.append(this.topic.name, this.batch(mine, position))));
      }
    }
    this.next = appended.at(-1)!.offset + 1;
    return { next: this.next, fence: this.holder };
  }

  private batch(changes: StateChange[], position: TaskPosition): OutgoingRecord[] {
    const headers = { [HOLDER_HEADER]: String(this.holder) };
    const commit: CommitRecord = { positions: position.positions, maxEventTime: position.maxEventTime === -Infinity ? null : position.maxEventTime };
    return [
      ...changes.map(({ key, bytes }) => ({ key, value: bytes, headers, partition: this.task })),
      { key: COMMIT_KEY, value: encodeStateValue(commit), headers, partition: this.task },
    ];
  }
}

function holderOf(record: LogRecord): number {
  const holder = record.headers[HOLDER_HEADER];
  return holder === undefined ? -1 : Number(holder);
}

function positionOf(bytes: Buffer): TaskPosition {
  const commit = decodeStateValue(bytes) as CommitRecord;
  return { positions: commit.positions, maxEventTime: commit.maxEventTime ?? -Infinity };
}
