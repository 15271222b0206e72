import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeRecords, offsetOfBody, scanFrames, scanRecords, type EncodableRecord, type StoredRecord } from './record-format.ts';

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
  private unsynced = false;
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
    const scan = scanRecords(
      tail,
      (record) => {
        lastOffset = record.offset;
      },
      false,
    );
    if (lastOffset >= 0) this.nextOffset = lastOffset + 1;
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
  }

  get activeSegment(): number {
    return this.activeBase;
  }

  async close(): Promise<void> {
    await this.file?.close();
    this.file = undefined;
    this.activeBase = -1;
  }

  private async openSegment(base: number, create: boolean): Promise<void> {
    await this.file?.close();
    const path = segmentPath(this.dir, base);
    this.file = await open(path, create ? 'a+' : 'r+');
    if (create) await syncDirectory(this.dir);
    this.activeBase = base;
    this.size = 0;
    this.nextOffset = base;
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
    return this.openSegment(base);
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
 * appends in progress: the records of the newest segment are counted up to the first one
 * that is incomplete or fails its checksum (a writer mid-write, or one that died, whose tail
 * the next writer cuts to exactly there), and each read scans only what was added since the
 * one before. Reads of one partition run one after the other.
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
      this.scannedBytes = 0;
      this.next = newest;
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
