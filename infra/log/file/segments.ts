import { mkdir, open, readdir, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../fs/atomic-write.ts';
import { encodeRecords, FRAME_BYTES, frameStarts, MAX_BODY_BYTES, offsetOfBody, scanFrames, scanRecords, type EncodableRecord, type StoredRecord } from './record-format.ts';

/**
 * Segment files of one topic-partition: `<base offset, 20 digits>.seg`, appended to in
 * offset order; the newest is the active segment, the others are closed.
 */

const SEGMENT_SUFFIX = '.seg';
const READ_CHUNK_BYTES = 1024 * 1024;

export function segmentPath(dir: string, base: number): string {
  return join(dir, String(base).padStart(20, '0') + SEGMENT_SUFFIX);
}

export async function listSegments(dir: string): Promise<number[]> {
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  return names
    .filter((n) => n.endsWith(SEGMENT_SUFFIX))
    .map((n) => Number(n.slice(0, -SEGMENT_SUFFIX.length)))
    .sort((a, b) => a - b);
}

/**
 * How far a partition's active segment is known whole, as Kafka's recovery point: its writer
 * records it (`recovery-point` in the partition's dir) after a sync that covers it, at most
 * every RECOVERY_POINT_EVERY_MS and on close, so that a writer or an end reader opening the
 * segment checks frames only past it, where it checked the whole segment (up to its size
 * limit, at every start of every process). It carries a sparse index of the segment too, as
 * Kafka's offset index, from which a reader starting mid-segment seeks instead of scanning
 * from the segment's start. Before use each is checked against the segment (the frame it
 * names read back); one that does not hold is ignored, and the segment scanned whole.
 */
interface RecoveryPoint {
  segment: number;
  /** The segment's bytes it covers: whole frames, synced. */
  bytes: number;
  /** Where the last of those frames starts. */
  lastFrameAt: number;
  /** The offset after that frame's. */
  nextOffset: number;
  /** [offset, where its frame starts] of the first frame at or past every INDEX_EVERY_BYTES of the segment, in order. */
  index: [number, number][];
}

const RECOVERY_POINT_FILE = 'recovery-point';
const RECOVERY_POINT_EVERY_MS = 1000;
const INDEX_EVERY_BYTES = 1024 * 1024;

/** The partition's recovery point as recorded, if it is one for `segment`; not checked against the segment. */
async function recordedRecoveryPoint(dir: string, segment: number): Promise<RecoveryPoint | undefined> {
  let point: RecoveryPoint;
  try {
    point = JSON.parse(await readFile(join(dir, RECOVERY_POINT_FILE), 'utf8')) as RecoveryPoint;
  } catch {
    return undefined; // none yet, or cut short by a crash
  }
  const numbers = [point.segment, point.bytes, point.lastFrameAt, point.nextOffset];
  return numbers.every(Number.isSafeInteger) && point.segment === segment && Array.isArray(point.index) ? point : undefined;
}

/** The partition's recovery point for `segment`, open as `file`, if it holds: the segment has its last frame where it says. */
async function readRecoveryPoint(dir: string, segment: number, file: FileHandle): Promise<RecoveryPoint | undefined> {
  const point = await recordedRecoveryPoint(dir, segment);
  return point && (await frameHolds(file, point.lastFrameAt, point.nextOffset - 1, point.bytes - point.lastFrameAt)) ? point : undefined;
}

/** Whether the segment holds at `position` a whole frame (of `size` bytes, if given) whose record has `offset`. */
async function frameHolds(file: FileHandle, position: number, offset: number, size?: number): Promise<boolean> {
  if (!Number.isSafeInteger(position) || position < 0) return false;
  const header = Buffer.alloc(FRAME_BYTES);
  if ((await file.read(header, 0, FRAME_BYTES, position)).bytesRead < FRAME_BYTES) return false;
  const frameSize = FRAME_BYTES + header.readUInt32LE(0);
  if ((size !== undefined && frameSize !== size) || frameSize > FRAME_BYTES + MAX_BODY_BYTES) return false;
  const frame = Buffer.allocUnsafe(frameSize);
  const { bytesRead } = await file.read(frame, 0, frameSize, position);
  let found = -1;
  const scan = scanFrames(frame.subarray(0, bytesRead), (body) => void (found = offsetOfBody(body)));
  return scan.stop === 'end' && scan.validBytes === frameSize && found === offset;
}

/**
 * Where to start reading `segment` (open as `file`) for `offset`: its index's nearest frame at
 * or before it, if that holds (the only frame a reader needs checked), else its start.
 */
async function indexedPosition(dir: string, segment: number, file: FileHandle, offset: number): Promise<number> {
  const point = await recordedRecoveryPoint(dir, segment);
  const entry = point?.index.filter(([at]) => at <= offset).at(-1);
  return entry && (await frameHolds(file, entry[1], entry[0])) ? entry[1] : 0;
}

export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The writing end of a partition. Used only while holding the log's process lock: each
 * `refresh` first catches up with what other processes appended, and cuts a torn tail
 * (a record half-written when its writer died), so offsets stay dense and unique.
 */
export class PartitionWriter {
  private activeBase = -1;
  private file: FileHandle | undefined;
  private size = 0;
  /** Where the segment's last frame starts; -1 while it has none. */
  private lastFrameAt = -1;
  /** The segment's sparse index (RecoveryPoint.index) as far as this writer knows it. */
  private index: [number, number][] = [];
  private unsynced = false;
  /** The bytes the partition's recovery point last recorded (or was read at), and when. */
  private pointBytes = 0;
  private pointAt = 0;
  nextOffset = 0;
  /** Set when the last append started a new segment; the cleaner runs then. */
  rolled = false;

  constructor(
    private readonly dir: string,
    private readonly segmentBytes: number,
    private readonly logger: { warn(obj: object, msg: string): void },
  ) {}

  async refresh(): Promise<void> {
    const segments = await listSegments(this.dir);
    const newest = segments.at(-1);
    if (newest === undefined) {
      await mkdir(this.dir, { recursive: true });
      await this.openSegment(0, true);
      return;
    }
    if (newest !== this.activeBase) await this.openSegment(newest, false);
    const file = this.file!;
    const { size } = await file.stat();
    if (size === this.size) return;
    const tail = Buffer.allocUnsafe(size - this.size);
    await file.read(tail, 0, tail.length, this.size);
    let lastOffset = -1;
    let lastFrameAt = -1;
    const scan = scanRecords(
      tail,
      (record, position) => {
        lastOffset = record.offset;
        lastFrameAt = position;
        this.noteFrame(record.offset, this.size + position);
      },
      false,
    );
    if (lastOffset >= 0) {
      this.nextOffset = lastOffset + 1;
      this.lastFrameAt = this.size + lastFrameAt;
    }
    this.size += scan.validBytes;
    if (scan.stop !== 'end') {
      // Only a writer that died mid-write leaves this, and we hold the lock: cut it.
      this.logger.warn(
        { dir: this.dir, segment: this.activeBase, cutBytes: size - this.size, reason: scan.stop },
        'cutting torn tail of segment',
      );
      await file.truncate(this.size);
      await file.datasync();
    }
  }

  async append(records: EncodableRecord[]): Promise<number[]> {
    this.rolled = false;
    if (this.size >= this.segmentBytes) {
      await this.openSegment(this.nextOffset, true);
      this.rolled = true;
    }
    const offsets = records.map((_, i) => this.nextOffset + i);
    const frames = encodeRecords(records, offsets);
    try {
      // A write may take only part of the bytes (a disk that fills does that before it fails).
      for (let written = 0; written < frames.length; ) {
        const { bytesWritten } = await this.file!.write(frames, written, frames.length - written, this.size + written);
        if (bytesWritten === 0) throw Object.assign(new Error('the file system took no more bytes'), { code: 'EIO' });
        written += bytesWritten;
      }
    } catch (err) {
      throw await this.abandonAppend(records.length, err as NodeJS.ErrnoException);
    }
    const starts = frameStarts(frames);
    starts.forEach((start, i) => this.noteFrame(offsets[i], this.size + start));
    this.lastFrameAt = this.size + starts.at(-1)!;
    this.size += frames.length;
    this.nextOffset += records.length;
    this.unsynced = true;
    return offsets;
  }

  /**
   * Cuts what a failed append wrote, so the segment ends at its last whole record (and a full
   * disk gets that space back); what cannot be cut yet, the next refresh cuts as a torn tail.
   * Returns the error to throw, naming the partition and keeping the cause's code (ENOSPC).
   */
  private async abandonAppend(count: number, cause: NodeJS.ErrnoException): Promise<Error> {
    await this.file!.truncate(this.size).catch((err: unknown) => this.logger.warn({ dir: this.dir, err }, 'could not cut a failed append yet'));
    const reason = cause.code === 'ENOSPC' ? 'no space left on the device' : cause.message;
    return Object.assign(new Error(`could not append ${count} record(s) to ${this.dir}: ${reason}; none of them was written`, { cause }), { code: cause.code });
  }

  async sync(): Promise<void> {
    if (!this.unsynced) return;
    await this.file!.datasync();
    this.unsynced = false;
    if (Date.now() - this.pointAt >= RECOVERY_POINT_EVERY_MS) await this.recordRecoveryPoint();
  }

  get activeSegment(): number {
    return this.activeBase;
  }

  async close(): Promise<void> {
    if (this.file && !this.unsynced) await this.recordRecoveryPoint();
    await this.file?.close();
    this.file = undefined;
    this.activeBase = -1;
  }

  /** Adds the frame of `offset` at `position` to the index if it is the first past the next INDEX_EVERY_BYTES. */
  private noteFrame(offset: number, position: number): void {
    const last = this.index.at(-1);
    if (position >= (last ? last[1] + INDEX_EVERY_BYTES : INDEX_EVERY_BYTES)) this.index.push([offset, position]);
  }

  /**
   * Records that the segment is whole up to its size: called only when all of it is synced.
   * Not synced itself: a point lost or cut short by a power cut only means a longer scan.
   * Never fails: a point not recorded only means a longer scan too.
   */
  private async recordRecoveryPoint(): Promise<void> {
    if (this.lastFrameAt < 0 || this.pointBytes === this.size) return;
    const point: RecoveryPoint = { segment: this.activeBase, bytes: this.size, lastFrameAt: this.lastFrameAt, nextOffset: this.nextOffset, index: this.index };
    this.pointAt = Date.now();
    try {
      await writeFileAtomic(join(this.dir, RECOVERY_POINT_FILE), JSON.stringify(point), { durable: false });
      this.pointBytes = this.size;
    } catch (err) {
      // The records are written and synced whatever becomes of the point (a full disk, say):
      // their append succeeds, and the next start scans further.
      this.logger.warn({ dir: this.dir, err }, 'could not record the recovery point; tried again in a second');
    }
  }

  private async openSegment(base: number, create: boolean): Promise<void> {
    await this.file?.close();
    const path = segmentPath(this.dir, base);
    this.file = await open(path, create ? 'a+' : 'r+');
    if (create) await syncDirectory(this.dir);
    // An existing segment is known whole up to its recovery point: refresh() checks what follows.
    const point = create ? undefined : await readRecoveryPoint(this.dir, base, this.file);
    this.activeBase = base;
    this.size = point?.bytes ?? 0;
    this.lastFrameAt = point?.lastFrameAt ?? -1;
    this.nextOffset = point?.nextOffset ?? base;
    this.pointBytes = point?.bytes ?? 0;
    this.index = point?.index ?? [];
  }
}

/**
 * The reading end of a partition: records from a given offset on, across segments, never
 * past a record that is incomplete or fails its checksum (a writer may be mid-write).
 */
export class PartitionReader {
  private file: FileHandle | undefined;
  private segmentBase = -1;
  /** The segments as last listed. */
  private segments: number[] = [];
  private filePosition = 0;
  private buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);

  constructor(
    private readonly dir: string,
    private next: number,
  ) {}

  /** The offset the next returned record will have at least. */
  get position(): number {
    return this.next;
  }

  seek(offset: number): void {
    this.next = offset;
    void this.file?.close();
    this.file = undefined;
  }

  /**
   * Up to `max` records from the position on. At the end of the newest segment it knows of,
   * the reader lists the directory for a newer one (a writer rolled) only if `lookForNewer`:
   * a consumer woken by each append asks that only at its polls, as a roll is rare and a
   * listing at every read was most of an idle consumer's work.
   */
  async read(max: number, lookForNewer = true): Promise<StoredRecord[]> {
    const out: StoredRecord[] = [];
    if (!this.file && !(await this.openFor(this.next))) return out;
    while (out.length < max) {
      const { bytesRead } = await this.file!.read(this.buffer, 0, this.buffer.length, this.filePosition);
      const chunk = this.buffer.subarray(0, bytesRead);
      let consumed = 0;
      const scan = scanRecords(chunk, (record, position, size) => {
        consumed = position + size;
        if (record.offset < this.next) return true;
        out.push(record);
        this.next = record.offset + 1;
        return out.length < max;
      });
      this.filePosition += consumed;
      if (out.length >= max) break;
      if (bytesRead === this.buffer.length && scan.stop !== 'corrupt') {
        // More of the file lies beyond this chunk; a record larger than the buffer grows it.
        if (consumed === 0) this.buffer = Buffer.allocUnsafe(this.buffer.length * 2);
        continue;
      }
      if (scan.stop !== 'end' || !(await this.moveToNextSegment(lookForNewer))) break;
    }
    return out;
  }

  async close(): Promise<void> {
    await this.file?.close();
    this.file = undefined;
  }

  private async openFor(offset: number): Promise<boolean> {
    const segments = (this.segments = await listSegments(this.dir));
    if (segments.length === 0) return false;
    const base = segments.filter((b) => b <= offset).at(-1) ?? segments[0];
    this.next = Math.max(offset, base);
    if (!(await this.openSegment(base))) return false;
    // Only the newest segment has a recovery point, whose index says where to start in it.
    if (base === segments.at(-1) && this.file) this.filePosition = await indexedPosition(this.dir, base, this.file, this.next);
    return true;
  }

  private async moveToNextSegment(lookForNewer: boolean): Promise<boolean> {
    let newer = this.segments.find((b) => b > this.segmentBase);
    if (newer === undefined && lookForNewer) newer = (this.segments = await listSegments(this.dir)).find((b) => b > this.segmentBase);
    if (newer === undefined) return false;
    await this.file?.close();
    return this.openSegment(newer);
  }

  private async openSegment(base: number): Promise<boolean> {
    try {
      this.file = await open(segmentPath(this.dir, base), 'r');
    } catch (err) {
      // Deleted by retention between listing and opening: start over from the listing.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return this.openFor(this.next);
      throw err;
    }
    this.segmentBase = base;
    this.filePosition = 0;
    return true;
  }
}

/**
 * The end offset of a partition, read without the log's lock so that it never waits for the
 * appends in progress: the records of the newest segment are counted, from its recovery point
 * if it has one that holds, up to the first one that is incomplete or fails its checksum (a
 * writer mid-write, or one that died, whose tail the next writer cuts to exactly there), and
 * each read scans only what was added since the one before. Reads of one partition run one
 * after the other.
 */
export class PartitionEnd {
  private file: FileHandle | undefined;
  private segmentBase = -1;
  private scannedBytes = 0;
  private next = 0;
  private reading: Promise<number> = Promise.resolve(0);

  constructor(private readonly dir: string) {}

  read(): Promise<number> {
    const run = this.reading.catch(() => 0).then(() => this.scan());
    this.reading = run;
    return run;
  }

  async close(): Promise<void> {
    await this.reading.catch(() => undefined);
    await this.file?.close();
    this.file = undefined;
  }

  private async scan(): Promise<number> {
    const newest = (await listSegments(this.dir)).at(-1);
    if (newest === undefined) return 0;
    if (newest !== this.segmentBase) {
      await this.file?.close();
      // The newest segment is never removed by the cleaner; a new one rolled meanwhile is
      // found by the next read.
      this.file = await open(segmentPath(this.dir, newest), 'r');
      this.segmentBase = newest;
      const point = await readRecoveryPoint(this.dir, newest, this.file);
      this.scannedBytes = point?.bytes ?? 0;
      this.next = point?.nextOffset ?? newest;
    }
    const { size } = await this.file!.stat();
    let chunk = Buffer.allocUnsafe(Math.min(READ_CHUNK_BYTES, Math.max(size - this.scannedBytes, 0)));
    while (this.scannedBytes < size) {
      const { bytesRead } = await this.file!.read(chunk, 0, Math.min(chunk.length, size - this.scannedBytes), this.scannedBytes);
      let last = -1;
      // Frames whose checksum holds are whole: only their offsets are needed here.
      const scan = scanFrames(chunk.subarray(0, bytesRead), (body) => void (last = offsetOfBody(body)));
      if (last >= 0) this.next = last + 1;
      this.scannedBytes += scan.validBytes;
      if (scan.stop === 'corrupt') break;
      if (scan.validBytes === 0) {
        if (bytesRead < chunk.length || this.scannedBytes + chunk.length >= size) break; // an incomplete record ends the file
        chunk = Buffer.allocUnsafe(chunk.length * 2); // a record larger than the chunk
      }
    }
    return this.next;
  }
}
