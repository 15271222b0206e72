import { crc32 } from 'node:zlib';
import type { Headers, LogRecord } from '../port.ts';

/**
 * On-disk layout of one record in a segment file (all integers little-endian):
 *
 *   u32 body length | u32 CRC-32 of the body | body
 *   body = u32 offset low | u32 offset high | u32 time low | u32 time high
 *        | i32 key length (-1: null) | key UTF-8 | i32 value length (-1: null) | value
 *        | u16 header count | per header: u16 name length | name | u32 value length | value
 *
 * The offset is stored in the record, so compaction can drop records without renumbering
 * and a reader can position itself by scanning. The CRC finds a torn or corrupt tail.
 */

export const FRAME_BYTES = 8;
const MIN_BODY_BYTES = 4 * 4 + 4 + 4 + 2;
/** Larger frames are taken as corruption rather than trusted. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const TWO_32 = 2 ** 32;

export interface StoredRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: Buffer | null;
  headers: Headers;
}

export interface EncodableRecord {
  key: string | null;
  value: Buffer | null;
  timestamp: number;
  headers?: Headers;
}

/**
 * Encodes records as consecutive frames in one buffer (one allocation, no concatenation);
 * record i gets offset `offsets[i]`.
 */
export function encodeRecords(records: readonly EncodableRecord[], offsets: readonly number[]): Buffer {
  let total = 0;
  for (const record of records) total += FRAME_BYTES + bodyLengthOf(record);
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  records.forEach((record, i) => {
    at = encodeInto(out, at, record, offsets[i]);
  });
  return out;
}

function bodyLengthOf(record: EncodableRecord): number {
  let length = MIN_BODY_BYTES + (record.key === null ? 0 : Buffer.byteLength(record.key, 'utf8')) + (record.value?.length ?? 0);
  if (record.headers) {
    for (const name in record.headers) length += 2 + Buffer.byteLength(name, 'utf8') + 4 + Buffer.byteLength(record.headers[name], 'utf8');
  }
  return length;
}

/** Writes one frame at `start`; returns where the next one starts. */
function encodeInto(out: Buffer, start: number, record: EncodableRecord, offset: number): number {
  let at = start + FRAME_BYTES;
  out.writeUInt32LE(offset % TWO_32, at);
  out.writeUInt32LE(Math.floor(offset / TWO_32), at + 4);
  out.writeUInt32LE(record.timestamp % TWO_32, at + 8);
  out.writeUInt32LE(Math.floor(record.timestamp / TWO_32), at + 12);
  at += 16;
  if (record.key === null) {
    out.writeInt32LE(-1, at);
    at += 4;
  } else {
    const length = out.write(record.key, at + 4, 'utf8');
    out.writeInt32LE(length, at);
    at += 4 + length;
  }
  if (record.value === null) {
    out.writeInt32LE(-1, at);
    at += 4;
  } else {
    out.writeInt32LE(record.value.length, at);
    record.value.copy(out, at + 4);
    at += 4 + record.value.length;
  }
  const headers = Object.entries(record.headers ?? {});
  out.writeUInt16LE(headers.length, at);
  at += 2;
  for (const [name, value] of headers) {
    const nameLength = out.write(name, at + 2, 'utf8');
    out.writeUInt16LE(nameLength, at);
    at += 2 + nameLength;
    const valueLength = out.write(value, at + 4, 'utf8');
    out.writeUInt32LE(valueLength, at);
    at += 4 + valueLength;
  }
  out.writeUInt32LE(at - start - FRAME_BYTES, start);
  out.writeUInt32LE(crc32(out.subarray(start + FRAME_BYTES, at)), start + 4);
  return at;
}

/** Why a scan stopped: at the exact end of the data, in a record cut short, or at a bad record. */
export type ScanStop = 'end' | 'incomplete' | 'corrupt';

export interface ScanResult {
  /** Bytes of whole, valid records from the start of the buffer. */
  validBytes: number;
  stop: ScanStop;
}

/**
 * Walks consecutive frames of `buf` whose checksum holds, calling `onFrame` with each body and
 * its frame's byte position and size. `onFrame` returns false to stop after the frame, or
 * 'corrupt' when the body does not parse (the scan stops before the frame).
 */
export function scanFrames(buf: Buffer, onFrame: (body: Buffer, position: number, size: number) => boolean | 'corrupt' | void): ScanResult {
  let at = 0;
  while (at < buf.length) {
    if (buf.length - at < FRAME_BYTES) return { validBytes: at, stop: 'incomplete' };
    const bodyLength = buf.readUInt32LE(at);
    if (bodyLength < MIN_BODY_BYTES || bodyLength > MAX_BODY_BYTES) return { validBytes: at, stop: 'corrupt' };
    const end = at + FRAME_BYTES + bodyLength;
    if (end > buf.length) return { validBytes: at, stop: 'incomplete' };
    const body = buf.subarray(at + FRAME_BYTES, end);
    if (crc32(body) !== buf.readUInt32LE(at + 4)) return { validBytes: at, stop: 'corrupt' };
    const verdict = onFrame(body, at, end - at);
    if (verdict === 'corrupt') return { validBytes: at, stop: 'corrupt' };
    at = end;
    if (verdict === false) break;
  }
  return { validBytes: at, stop: 'end' };
}

/**
 * Parses consecutive records from `buf`, calling `onRecord` for each valid one with its
 * byte position relative to the buffer. Returning false from `onRecord` stops the scan
 * after that record. Values are copies unless `copyValues` is false: then they are views
 * of `buf`, for a caller that is done with them before `buf` is reused.
 */
export function scanRecords(
  buf: Buffer,
  onRecord: (record: StoredRecord, position: number, size: number) => boolean | void,
  copyValues = true,
): ScanResult {
  return scanFrames(buf, (body, position, size) => {
    const record = decodeBody(body, copyValues);
    return record ? onRecord(record, position, size) : 'corrupt';
  });
}

/** Where each of the consecutive frames in `frames` (encodeRecords) starts. */
export function frameStarts(frames: Buffer): number[] {
  const starts: number[] = [];
  for (let at = 0; at < frames.length; at += FRAME_BYTES + frames.readUInt32LE(at)) starts.push(at);
  return starts;
}

/** The offset a frame body (scanFrames) holds, without decoding the rest. */
export function offsetOfBody(body: Buffer): number {
  return body.readUInt32LE(0) + body.readUInt32LE(4) * TWO_32;
}

function decodeBody(body: Buffer, copyValue: boolean): StoredRecord | undefined {
  const offset = offsetOfBody(body);
  const timestamp = body.readUInt32LE(8) + body.readUInt32LE(12) * TWO_32;
  let at = 16;
  const keyLength = body.readInt32LE(at);
  at += 4;
  if (at + Math.max(keyLength, 0) + 4 > body.length) return undefined;
  const key = keyLength < 0 ? null : body.toString('utf8', at, at + keyLength);
  at += Math.max(keyLength, 0);
  const valueLength = body.readInt32LE(at);
  at += 4;
  if (at + Math.max(valueLength, 0) + 2 > body.length) return undefined;
  const view = valueLength < 0 ? null : body.subarray(at, at + valueLength);
  const value = view && copyValue ? Buffer.from(view) : view;
  at += Math.max(valueLength, 0);
  const headerCount = body.readUInt16LE(at);
  at += 2;
  const headers: Headers = {};
  for (let i = 0; i < headerCount; i++) {
    const nameLength = body.readUInt16LE(at);
    const name = body.toString('utf8', at + 2, at + 2 + nameLength);
    at += 2 + nameLength;
    const valueBytes = body.readUInt32LE(at);
    headers[name] = body.toString('utf8', at + 4, at + 4 + valueBytes);
    at += 4 + valueBytes;
  }
  return at === body.length ? { offset, timestamp, key, value, headers } : undefined;
}

/** A stored record as the port's LogRecord; a literal of fixed shape, much cheaper than a spread. */
export function toLogRecord(r: StoredRecord, topic: string, partition: number): LogRecord {
  return { topic, partition, offset: r.offset, key: r.key, value: r.value, timestamp: r.timestamp, headers: r.headers };
}
