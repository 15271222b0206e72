import { spawn, type ChildProcess } from 'node:child_process';
import { appendFile, mkdtemp, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { listSegments, segmentPath } from '../../infra/log/file/segments.ts';
import type { TopicSpec } from '../../schemas/catalogue.ts';
import { readTopic } from '../helpers/read-topic.ts';
import { waitFor } from '../../infra/wait.ts';

const silent = pino({ level: 'silent' });
const spec = (name: string, extra: Partial<TopicSpec> = {}): TopicSpec => ({
  name,
  partitions: 2,
  cleanupPolicy: 'delete',
  retentionMs: -1,
  retentionBytes: -1,
  ...extra,
});

function startWriter(dir: string, writer: string, topic: string, inFlight = 1) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/append-until-killed.ts', dir, writer, topic, String(inFlight)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const state = { acked: -1, appends: 0 };
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      state.acked = Number(line.split(' ')[2]);
      state.appends++;
    }
  });
  return { child, state };
}

function kill9(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('file log durability', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-durability-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('loses no acknowledged record and duplicates none when writers are killed with SIGKILL', async () => {
    const topic = 'crash';
    const setup = await FileEventLog.open({ dir, fsync: 'always', segmentBytes: 16 * 1024, logger: silent });
    await setup.ensureTopics([spec(topic)]);
    await setup.close();
    for (let round = 0; round < 3; round++) {
      // Two processes append at once, as the service and the CLI would; new names each round.
      const names = [`a${round}`, `b${round}`];
      const writers = names.map((name) => startWriter(dir, name, topic));
      const target = 200 + round * 97;
      await waitFor(() => writers.every((w) => w.state.acked >= target), 'writers to make progress', 60_000);
      await Promise.all(writers.map((w) => kill9(w.child)));

      const log = await FileEventLog.open({ dir, fsync: 'always', segmentBytes: 16 * 1024, logger: silent });
      const records = await readTopic(log, topic);
      for (let p = 0; p < 2; p++) {
        const offsets = records.filter((r) => r.partition === p).map((r) => r.offset);
        expect(offsets).toEqual(offsets.map((_, i) => i)); // dense, unique, ordered
      }
      names.forEach((name, i) => {
        const numbers = records
          .map((r) => r.value!.toString().split(':'))
          .filter(([writer]) => writer === name)
          .map(([, n]) => Number(n))
          .sort((x, y) => x - y);
        // Every acknowledged record is there and none twice. Records of the append cut by the
        // kill may be present on one partition and not the other: they were never acknowledged.
        const acked = writers[i].state.acked;
        expect(new Set(numbers).size).toBe(numbers.length);
        expect(numbers.filter((n) => n <= acked)).toEqual(Array.from({ length: acked + 1 }, (_, k) => k));
      });
      await log.close();
    }
  });

  it('cuts a torn tail and keeps appending with dense offsets', async () => {
    const topic = 'torn';
    const log = await FileEventLog.open({ dir, fsync: 'always', segmentBytes: 1024 * 1024, logger: silent });
    await log.ensureTopics([spec(topic, { partitions: 1 })]);
    await log.append(topic, Array.from({ length: 10 }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`) })));
    await log.close();

    const partitionDir = join(dir, 'log', topic, '0');
    const segment = segmentPath(partitionDir, (await listSegments(partitionDir))[0]);
    const { size } = await stat(segment);
    await truncate(segment, size - 3); // the last record is now cut short
    await appendFile(segment, Buffer.alloc(40)); // and followed by zeroes, as after a power cut

    const reopened = await FileEventLog.open({ dir, fsync: 'always', segmentBytes: 1024 * 1024, logger: silent });
    expect((await readTopic(reopened, topic)).map((r) => r.value!.toString())).toEqual(
      Array.from({ length: 9 }, (_, i) => `v${i}`),
    );
    // The end is read without the lock, so before any writer cut the tail: it stops before it.
    expect((await reopened.endOffsets(topic))[0].offset).toBe(9);
    const [next] = await reopened.append(topic, [{ key: null, value: Buffer.from('after') }]);
    expect(next.offset).toBe(9);
    expect((await reopened.endOffsets(topic))[0].offset).toBe(10);
    const all = await readTopic(reopened, topic);
    expect(all.map((r) => [r.offset, r.value!.toString()]).at(-1)).toEqual([9, 'after']);
    expect(all).toHaveLength(10);
    await reopened.close();
  });

  it('rolls segments, reads across them, and compacts closed segments to the latest value per key', async () => {
    const topic = 'compacted';
    const log = await FileEventLog.open({ dir, fsync: 'never', segmentBytes: 512, logger: silent });
    await log.ensureTopics([spec(topic, { partitions: 1, cleanupPolicy: 'compact' })]);
    for (let round = 0; round < 20; round++) {
      await log.append(
        topic,
        ['x', 'y', 'z'].map((key) => ({ key, value: Buffer.from(`${key}${round}`), timestamp: 1_700_000_000_000 + round })),
      );
      // Read each round: the end follows the newest segment across rolls and compactions.
      expect((await log.endOffsets(topic))[0].offset).toBe(3 * (round + 1));
    }
    const partitionDir = join(dir, 'log', topic, '0');
    expect((await listSegments(partitionDir)).length).toBeGreaterThan(3);
    const records = await readTopic(log, topic);
    const latest = new Map(records.map((r) => [r.key, r.value!.toString()]));
    expect(Object.fromEntries(latest)).toEqual({ x: 'x19', y: 'y19', z: 'z19' });
    expect(records.length).toBeLessThan(60); // older values were compacted away
    const offsets = records.map((r) => r.offset);
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets); // ordered, with gaps
    expect(offsets.at(-1)).toBe(59);
    await log.close();
  });

  it('follows a growing topic with reads that go on from the last offset, across segment rolls', async () => {
    const topic = 'followed';
    const log = await FileEventLog.open({ dir, fsync: 'never', segmentBytes: 512, logger: silent });
    await log.ensureTopics([spec(topic, { partitions: 1 })]);
    const seen: string[] = [];
    let next = 0;
    for (let i = 0; i < 60; i++) {
      await log.append(topic, [{ key: null, value: Buffer.from(`v${i}`) }]);
      // Twice per append: the second read finds nothing new and must leave the place unchanged.
      for (let pass = 0; pass < 2; pass++) {
        for (const record of await log.read(topic, 0, next, 3)) {
          seen.push(record.value!.toString());
          next = record.offset + 1;
        }
      }
    }
    expect((await listSegments(join(dir, 'log', topic, '0'))).length).toBeGreaterThan(3);
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => `v${i}`));
    // A read from an earlier place than any kept reader still starts there.
    expect((await log.read(topic, 0, 5, 2)).map((r) => r.value!.toString())).toEqual(['v5', 'v6']);
    await log.close();
  });

  it('deletes the oldest closed segments beyond retention bytes', async () => {
    const topic = 'retained';
    const log = await FileEventLog.open({ dir, fsync: 'never', segmentBytes: 512, logger: silent });
    await log.ensureTopics([spec(topic, { partitions: 1, retentionBytes: 2048 })]);
    for (let i = 0; i < 40; i++) await log.append(topic, [{ key: null, value: Buffer.alloc(60, i) }]);
    const [start] = await log.startOffsets(topic);
    const [end] = await log.endOffsets(topic);
    expect(start.offset).toBeGreaterThan(0);
    expect(end.offset).toBe(40);
    const records = await readTopic(log, topic);
    expect(records[0].offset).toBe(start.offset);
    expect(records.at(-1)!.offset).toBe(39);
    await log.close();
  });

  it('lets another process append between two appends of a process appending in a loop', async () => {
    // The service appends without pause during a catch-up; an operator's command (another
    // process) must get the lock at the next release, not whenever its poll happens to land.
    const topic = 'contended';
    const log = await FileEventLog.open({ dir, fsync: 'always', segmentBytes: 1024 * 1024, logger: silent });
    await log.ensureTopics([spec(topic)]);
    const inFlight = 8;
    const busy = startWriter(dir, 'busy', topic, inFlight);
    try {
      await waitFor(() => busy.state.appends >= 100, 'the busy writer to run', 60_000);
      for (let i = 0; i < 10; i++) {
        const before = busy.state.appends;
        await log.append(topic, [{ key: 'operator', value: Buffer.from(`operator:${i}`) }]);
        // One group commit holds up to `inFlight` of its appends: the one in hand when we asked,
        // the one that raced our request, and a few more for acks still in the pipe. An unfair
        // lock lets thousands through here.
        expect(busy.state.appends - before).toBeLessThanOrEqual(5 * inFlight);
      }
    } finally {
      await kill9(busy.child);
      await log.close();
    }
  });
});
