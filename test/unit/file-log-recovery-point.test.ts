import { appendFile, mkdir, mkdtemp, open, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { listSegments, segmentPath } from '../../infra/log/file/segments.ts';
import type { TopicSpec } from '../../schemas/catalogue.ts';
import { readTopic } from '../helpers/read-topic.ts';

/**
 * A partition's recovery point (infra/log/file/segments.ts): where its writer last knew the
 * active segment whole and synced, with a sparse index of it. A writer or an end reader opening
 * the segment checks frames only past the point; a reader starting mid-segment seeks by the
 * index. A point that does not hold is ignored.
 */

const TOPIC = 'points';
const RECORDS = 3000;
/** About 1 KiB a record: the segment spans a few of the index's 1 MiB steps. */
const value = (i: number) => Buffer.from(`${i}:`.padEnd(1000, 'x'));
const spec: TopicSpec = { name: TOPIC, partitions: 1, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 };

describe('the file log recovery point', () => {
  let dir: string;
  let partitionDir: string;
  const logs: FileEventLog[] = [];
  const openLog = async (fsync: 'always' | 'never' = 'always') => {
    const log = await FileEventLog.open({ dir, fsync, segmentBytes: 64 * 1024 * 1024, logger: pino({ level: 'silent' }) });
    logs.push(log);
    return log;
  };
  const segment = async () => segmentPath(partitionDir, (await listSegments(partitionDir))[0]);
  const pointFile = () => join(partitionDir, 'recovery-point');

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-recovery-point-'));
    partitionDir = join(dir, 'log', TOPIC, '0');
    const log = await openLog();
    await log.ensureTopics([spec]);
    for (let i = 0; i < RECORDS; i += 500) await log.append(TOPIC, Array.from({ length: 500 }, (_, k) => ({ key: null, value: value(i + k) })));
    await log.close();
  });
  afterEach(async () => {
    await Promise.all(logs.splice(0).map((log) => log.close()));
    await rm(dir, { recursive: true, force: true });
  });

  /** Overwrites one byte of the value of the record at about `share` of the segment: its checksum fails. */
  async function corruptAt(share: number): Promise<void> {
    const file = await open(await segment(), 'r+');
    const { size } = await file.stat();
    await file.write(Buffer.from('!'), 0, 1, Math.floor(size * share));
    await file.close();
  }

  it('is written on close with the segment whole up to it and an index entry per MiB', async () => {
    const point = JSON.parse(await readFile(pointFile(), 'utf8')) as { bytes: number; nextOffset: number; index: [number, number][] };
    expect(point.bytes).toBe((await stat(await segment())).size);
    expect(point.nextOffset).toBe(RECORDS);
    expect(point.index.length).toBe(Math.floor(point.bytes / (1024 * 1024)));
    expect(point.index.map(([offset]) => offset)).toEqual([...point.index.map(([offset]) => offset)].sort((a, b) => a - b));
  });

  it('lets a reopening writer check only the frames past it: the next append continues the offsets', async () => {
    // A frame before the point no longer holds; the writer does not look at it again (a reader does).
    await corruptAt(0.1);
    const log = await openLog();
    const [appended] = await log.append(TOPIC, [{ key: null, value: Buffer.from('next') }]);
    expect(appended.offset).toBe(RECORDS);
    expect((await log.endOffsets(TOPIC))[0].offset).toBe(RECORDS + 1);
  });

  it('lets a reader starting mid-segment seek by its index, past what it never needs to check', async () => {
    await corruptAt(0.1);
    const log = await openLog();
    // From offset 0 a reader stops at the frame that fails its checksum.
    const fromStart = await log.read(TOPIC, 0, 0, RECORDS);
    expect(fromStart.length).toBeLessThan(RECORDS / 2);
    // From two thirds in, it starts at the index's entry before that offset.
    const from = Math.floor(RECORDS * 0.66);
    const tail = await log.read(TOPIC, 0, from, RECORDS);
    expect(tail.map((r) => r.offset)).toEqual(Array.from({ length: RECORDS - from }, (_, i) => from + i));
    expect(tail[0].value).toEqual(value(from));
  });

  it('still has a torn tail past it cut, and the offsets go on from the last whole record', async () => {
    await appendFile(await segment(), Buffer.alloc(40)); // zeroes past the point, as after a power cut
    const log = await openLog();
    expect((await log.endOffsets(TOPIC))[0].offset).toBe(RECORDS);
    const [appended] = await log.append(TOPIC, [{ key: null, value: Buffer.from('next') }]);
    expect(appended.offset).toBe(RECORDS);
    expect((await readTopic(log, TOPIC)).map((r) => r.offset)).toEqual(Array.from({ length: RECORDS + 1 }, (_, i) => i));
  });

  // Each spoils the point, or the segment under it, and says how many records stay whole.
  for (const [name, spoil, whole] of [
    ['its last frame was cut short', async () => truncate(await segment(), (await stat(await segment())).size - 3), RECORDS - 1],
    ['it is not JSON', () => writeFile(pointFile(), '{"segment":0,"byt'), RECORDS],
    ['it names another segment', async () => writeFile(pointFile(), (await readFile(pointFile(), 'utf8')).replace('"segment":0', '"segment":7')), RECORDS],
    ['its bytes are not where a frame ends', async () => writeFile(pointFile(), (await readFile(pointFile(), 'utf8')).replace(/"bytes":(\d+)/, (_, n: string) => `"bytes":${Number(n) - 10}`)), RECORDS],
  ] as const) {
    it(`is ignored when ${name}: the segment is checked whole`, async () => {
      await spoil();
      const log = await openLog();
      expect((await log.endOffsets(TOPIC))[0].offset).toBe(whole);
      const [appended] = await log.append(TOPIC, [{ key: null, value: Buffer.from('next') }]);
      expect(appended.offset).toBe(whole);
      expect((await log.read(TOPIC, 0, RECORDS - 10, 100)).map((r) => r.offset)).toEqual(Array.from({ length: whole + 1 - (RECORDS - 10) }, (_, i) => RECORDS - 10 + i));
    });
  }

  it('does not fail an append when it cannot be recorded', async () => {
    await rm(pointFile());
    await mkdir(pointFile()); // a directory in its place: renaming a file onto it fails
    const log = await openLog();
    const [appended] = await log.append(TOPIC, [{ key: null, value: Buffer.from('next') }]);
    expect(appended.offset).toBe(RECORDS);
    await log.close();
    await rm(pointFile(), { recursive: true });
    const reopened = await openLog();
    expect((await reopened.endOffsets(TOPIC))[0].offset).toBe(RECORDS + 1);
  });

  it('is not written by a log that does not sync', async () => {
    await rm(pointFile());
    const log = await openLog('never');
    await log.append(TOPIC, [{ key: null, value: Buffer.from('unsynced') }]);
    await log.close();
    await expect(stat(pointFile())).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
