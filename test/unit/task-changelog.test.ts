import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { TopicSpec } from '../../schemas/catalogue.ts';
import { TaskChangelog } from '../../processors/runtime/state/changelog.ts';
import { TaskStateStore, TaskTakenOverError } from '../../processors/runtime/state/task-store.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';

/**
 * A task's changelog (processors/runtime/state/changelog.ts) on the durable file log: given
 * checkpoints of one process, then what a process with a store of its own, or none, restores.
 */
const TOPIC: TopicSpec = { name: 'state.test.v1.changelog', partitions: 2, cleanupPolicy: 'compact', retentionMs: -1, retentionBytes: -1 };
const TASK = 1;

describe('a task changelog', () => {
  let dir: string;
  let log: FileEventLog;
  const stores: TaskStateStore[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-changelog-'));
    log = await FileEventLog.open({ dir: join(dir, 'log'), fsync: 'never', segmentBytes: 256 * 1024, logger: silentLogger, pollIntervalMs: 20 });
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A process of its own: a store file in its own dir, and the task taken through the changelog. */
  async function process(name: string): Promise<{ store: TaskStateStore; changelog: TaskChangelog; restored: number }> {
    const { store } = await TaskStateStore.open(join(dir, name, 'task.lmdb'), 1);
    stores.push(store);
    const changelog = new TaskChangelog(log, TOPIC, TASK);
    const { restoredRecords } = await changelog.take(store);
    return { store, changelog, restored: restoredRecords };
  }

  async function checkpoint(p: { store: TaskStateStore; changelog: TaskChangelog }, position: number, values: Record<string, number | null>): Promise<void> {
    const table = p.store.table<number>('t');
    for (const [key, value] of Object.entries(values)) {
      if (value === null) table.delete(key);
      else table.set(key, value);
    }
    const at = { positions: { 'in#1': position }, maxEventTime: position };
    const changes = p.store.changes();
    p.store.commit(at, changes, await p.changelog.append(changes, at, (key) => p.store.committedBytes(key)));
  }

  const read = (store: TaskStateStore, ...keys: string[]) => keys.map((key) => store.table<number>('t').get(key));

  it('moves the state to a process without a store: every committed key and the positions they cover', async () => {
    const first = await process('a');
    await checkpoint(first, 10, { x: 1, y: 2, z: 3 });
    await checkpoint(first, 20, { y: 22, z: null });

    const second = await process('b');
    expect(second.store.position()).toEqual({ positions: { 'in#1': 20 }, maxEventTime: 20 });
    expect(read(second.store, 'x', 'y', 'z')).toEqual([1, 22, undefined]);
    // Every record goes to the task's partition, none to the other.
    expect((await log.endOffsets(TOPIC.name)).find((p) => p.partition === 0)?.offset).toBe(0);
  });

  it('reads only what was appended after its own store\'s last position when the task comes back', async () => {
    const first = await process('a');
    await checkpoint(first, 10, { x: 1 });
    const second = await process('b');
    await checkpoint(second, 20, { x: 2, y: 2 });

    const back = await process('a'); // the first process's store, one commit behind
    expect(back.restored).toBe(4); // the second's claim, its two keys and its commit: not the first's own records
    expect(back.store.position()).toEqual({ positions: { 'in#1': 20 }, maxEventTime: 20 });
    expect(read(back.store, 'x', 'y')).toEqual([2, 2]);
  });

  /** A holder paused past its group's timeout goes on for a moment once another took the task: its records reach the log, then it learns of the claim. */
  async function pausedThenTakenOver(): Promise<{ successor: Awaited<ReturnType<typeof process>> }> {
    const paused = await process('a');
    await checkpoint(paused, 10, { x: 1, y: 1 });
    const successor = await process('b');
    await expect(checkpoint(paused, 15, { x: 666 })).rejects.toThrow(TaskTakenOverError);
    expect(paused.store.position()).toEqual({ positions: { 'in#1': 10 }, maxEventTime: 10 });
    return { successor };
  }

  it('fences out a holder that writes on after another took the task: its append fails, and a restore skips its records', async () => {
    await pausedThenTakenOver();
    const next = await process('c');
    expect(next.store.position()).toEqual({ positions: { 'in#1': 10 }, maxEventTime: 10 });
    expect(read(next.store, 'x', 'y')).toEqual([1, 1]);
  });

  it('has the new holder write over the records of the one it fenced out, so that compaction keeps its values', async () => {
    const { successor } = await pausedThenTakenOver();

    await checkpoint(successor, 20, { y: 2 });
    const third = await process('c');
    expect(third.store.position()).toEqual({ positions: { 'in#1': 20 }, maxEventTime: 20 });
    expect(read(third.store, 'x', 'y')).toEqual([1, 2]);

    // The successor wrote its own x after the paused one's, so compaction keeps the right one.
    const records = await log.read(TOPIC.name, TASK, 0, 100);
    const successorClaim = records.filter((r) => r.key === '\u0001claim')[1];
    expect(records.filter((r) => r.key === 't\u0000x').map((r) => r.headers.holder)).toEqual([String(records[0].offset), String(records[0].offset), String(successorClaim.offset)]);
  });
});
