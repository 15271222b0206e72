import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { publicEvents } from '../../processors/public-events/public-events.ts';
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import { readTaskHead, StateStoreError, TaskStateStore, TaskTakenOverError } from '../../processors/runtime/state/task-store.ts';

/** A task's state store (processors/runtime/state): given changes, then what a commit writes and what a reopen finds. */
describe('a task state store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-task-store-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes only the keys changed since the last commit, and a reopen finds every committed value', async () => {
    const file = join(dir, 'task.lmdb');
    const { store } = await TaskStateStore.open(file, 1);
    const table = store.table<{ n: number }>('counts');
    for (let i = 0; i < 1000; i++) table.set(`k${i}`, { n: i });
    expect(store.commit({ positions: { 'in#0': 1000 }, maxEventTime: 10 })).toEqual({ keysWritten: 1000 });

    table.set('k1', { n: -1 });
    table.set('k2', { n: -2 });
    table.delete('k3');
    expect(table.get('k1')).toEqual({ n: -1 });
    expect(store.commit({ positions: { 'in#0': 1003 }, maxEventTime: 11 })).toEqual({ keysWritten: 3 });
    expect(store.commit({ positions: { 'in#0': 1003 }, maxEventTime: 11 })).toEqual({ keysWritten: 0 });
    await store.close();

    const reopened = (await TaskStateStore.open(file, 1)).store;
    const again = reopened.table<{ n: number }>('counts');
    expect(reopened.position()).toEqual({ positions: { 'in#0': 1003 }, maxEventTime: 11 });
    expect([again.get('k0'), again.get('k1'), again.get('k2'), again.get('k3'), again.get('k999')]).toEqual([{ n: 0 }, { n: -1 }, { n: -2 }, undefined, { n: 999 }]);
    expect([...again.entries()].length).toBe(999);
    await reopened.close();
  });

  it('drops what changed since the last commit when the task resumes from it', async () => {
    const { store } = await TaskStateStore.open(join(dir, 'task.lmdb'), 1);
    const table = store.table<number>('t');
    table.set('a', 1);
    store.commit({ positions: {}, maxEventTime: 1 });
    table.set('a', 2);
    table.set('b', 2);
    store.take();
    expect([table.get('a'), table.get('b')]).toEqual([1, undefined]);
    await store.close();
  });

  it('fences out the earlier holder once another takes the task: its reads and commits fail, and the file keeps the new holder\'s state', async () => {
    const file = join(dir, 'task.lmdb');
    const paused = (await TaskStateStore.open(file, 1)).store;
    paused.table<number>('t').set('a', 1);
    paused.commit({ positions: { 'in#0': 1 }, maxEventTime: 1 });

    const successor = (await TaskStateStore.open(file, 1)).store;
    successor.table<number>('t').set('b', 2);
    successor.commit({ positions: { 'in#0': 2 }, maxEventTime: 2 });

    const stale = paused.table<number>('t');
    expect(stale.get('a')).toBe(1); // read before the takeover, from its own cache
    expect(() => stale.get('b')).toThrow(TaskTakenOverError);
    stale.set('a', 99);
    expect(() => paused.commit({ positions: { 'in#0': 9 }, maxEventTime: 9 })).toThrow(TaskTakenOverError);
    await paused.close();

    expect(successor.position()).toEqual({ positions: { 'in#0': 2 }, maxEventTime: 2 });
    expect([successor.table<number>('t').get('a'), successor.table<number>('t').get('b')]).toEqual([1, 2]);
    await successor.close();
  });

  it('after a kill -9 inside a commit, holds the last committed checkpoint whole', async () => {
    const file = join(dir, 'task.lmdb');
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '..', 'fixtures', 'task-store-killed-in-commit.ts'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('inside the transaction')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before its second commit`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));

    const { store } = await TaskStateStore.open(file, 1);
    const table = store.table<{ v: number }>('t');
    expect(store.position()).toEqual({ positions: { 'in#0': 100 }, maxEventTime: 1 });
    expect(new Set([...table.entries()].map(([, value]) => value.v))).toEqual(new Set([1]));
    await store.close();
  });

  it('empties a store of another state version, so the task rebuilds from offset 0', async () => {
    const file = join(dir, 'task.lmdb');
    const first = (await TaskStateStore.open(file, 1)).store;
    first.table<number>('t').set('a', 1);
    first.commit({ positions: { 'in#0': 5 }, maxEventTime: 5 });
    await first.close();
    const { store, reset } = await TaskStateStore.open(file, 2);
    expect(reset).toBe(true);
    expect([store.position(), store.table<number>('t').get('a')]).toEqual([undefined, undefined]);
    await store.close();
  });

  it('refuses a file that is not a state store, naming it and how to rebuild', async () => {
    const file = join(dir, 'task.lmdb');
    await writeFile(file, Buffer.alloc(64 * 1024, 0x5a));
    const opening = TaskStateStore.open(file, 1);
    await expect(opening).rejects.toThrow(StateStoreError);
    await expect(opening).rejects.toThrow(new RegExp(`${file.replaceAll('/', '\\/')}.*delete .* to rebuild`));
  });

  it('given a whole-state checkpoint of an earlier version beside it, logs that the task rebuilds from offset 0', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    await mkdir(join(dir, publicEvents.name), { recursive: true });
    await writeFile(join(dir, publicEvents.name, '0.ckpt'), 'saved whole');
    const checkpoint = await localCheckpoints(dir, publicEvents, logger).load(publicEvents.name, 0);
    expect(checkpoint?.positions).toEqual({});
    const said = lines.map((line) => JSON.parse(line) as { msg: string; file: string });
    expect(said).toContainEqual(expect.objectContaining({ msg: expect.stringContaining('rebuilds its state from offset 0'), file: join(dir, publicEvents.name, '0.ckpt') }));
  });

  it('read from outside its processes, tells who holds the task and where its last commit stands, and nothing of a file still being created', async () => {
    const file = join(dir, 'task.lmdb');
    await writeFile(file, ''); // as its first holder has just created it: LMDB would crash reading it
    expect(await readTaskHead(file)).toEqual({});
    await rm(file);
    const { store } = await TaskStateStore.open(file, 1);
    store.table<number>('t').set('k', 1);
    store.commit({ positions: { 'in#0': 5 }, maxEventTime: 7 });
    expect(await readTaskHead(file)).toEqual({ holder: { pid: process.pid, host: hostname() }, position: { positions: { 'in#0': 5 }, maxEventTime: 7 } });
    await store.close();
  });
});
