import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { TOPICS } from '../../../schemas/catalogue.ts';
import type { Codec } from '../../../schemas/codec.ts';
import type { DeadLetter } from '../../../schemas/records.ts';
import { BatchProducer, type LogAppender } from '../producer.ts';
import { endsInsideQuotes, splitCsvRecord } from './csv.ts';
import { convertRow, fieldName, kindFields, type FieldError, type ImportKind, type RowResult } from './formats.ts';
import { readLines, type RawLine } from './lines.ts';

/**
 * Imports one NDJSON or CSV file of posts, market ticks or token metadata: streams it,
 * validates every row, produces the valid ones to their topic in batches and each invalid
 * one to ops.dead-letters with its line, reason and raw bytes.
 */

export const IMPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface Rejection {
  /** Line of the file where the row starts. */
  line: number;
  errors: FieldError[];
}

export interface ImportProgress {
  rows: number;
  bytesRead: number;
  totalBytes: number;
}

export interface ImportOptions {
  path: string;
  kind: ImportKind;
  /** Default: from the extension (.ndjson and .jsonl, .csv). */
  format?: ImportFormat;
  log: LogAppender;
  codec: Codec;
  /** Time of rejection, stamped on dead letters of rows without a readable event time. */
  now: () => number;
  onReject?: (rejection: Rejection) => void;
  onProgress?: (progress: ImportProgress) => void;
  batchRecords?: number;
  /** Longer lines (or multi-line CSV records) are rejected without being held in memory. */
  maxRowBytes?: number;
}

export interface ImportResult {
  rows: number;
  accepted: number;
  rejected: number;
}

/** A problem with the file as a whole (unreadable, unknown format, bad CSV header): nothing imported. */
export class ImportFileError extends Error {
  readonly code = 'IMPORT_FILE';
}

interface Row {
  line: number;
  bytes: Buffer;
  result: RowResult;
}

export function formatOf(path: string): ImportFormat | null {
  const ext = extname(path).toLowerCase();
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  if (ext === '.csv') return 'csv';
  return null;
}

export async function importFile(options: ImportOptions): Promise<ImportResult> {
  const format = options.format ?? formatOf(options.path);
  if (!format) throw new ImportFileError(`cannot tell the format of ${options.path}: name it .ndjson, .jsonl or .csv`);
  let totalBytes: number;
  try {
    totalBytes = (await stat(options.path)).size;
  } catch (err) {
    throw new ImportFileError(`cannot read ${options.path}: ${(err as Error).message}`);
  }
  const source = basename(options.path);
  const maxRowBytes = options.maxRowBytes ?? 1024 * 1024;
  const producer = new BatchProducer(options.log, options.codec, options.batchRecords ?? 5000);
  const result: ImportResult = { rows: 0, accepted: 0, rejected: 0 };
  let bytesRead = 0;

  const stream = createReadStream(options.path, { highWaterMark: 256 * 1024 });
  const lines = readLines(stream, maxRowBytes, (n) => (bytesRead = n));
  const rows = format === 'ndjson' ? ndjsonRows(lines, options.kind) : csvRows(lines, options.kind, maxRowBytes);
  try {
    for await (const row of rows) {
      result.rows++;
      if (row.result.ok) {
        result.accepted++;
        await producer.send(row.result.topic, row.result.key, row.result.value, row.result.ts);
      } else {
        result.rejected++;
        options.onReject?.({ line: row.line, errors: row.result.errors });
        const letter: DeadLetter = {
          source,
          partition: null,
          offset: null,
          line: row.line,
          stage: 'ingest',
          reason: describe(row.result.errors),
          key: row.result.key,
          payload: row.bytes,
          ts: row.result.ts ?? options.now(),
        };
        await producer.send(TOPICS.deadLetters.name, source, letter, letter.ts);
      }
      if (result.rows % 1000 === 0) options.onProgress?.({ rows: result.rows, bytesRead, totalBytes });
    }
  } finally {
    stream.destroy();
  }
  await producer.flush();
  options.onProgress?.({ rows: result.rows, bytesRead: totalBytes, totalBytes });
  return result;
}

/** One line of text for a rejection: every problem as `field: reason`. */
export function describe(errors: FieldError[]): string {
  return errors.map((e) => `${e.field}: ${e.reason}`).join('; ');
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decode(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

function rejected(line: number, bytes: Buffer, field: string, reason: string): Row {
  return { line, bytes, result: { ok: false, errors: [{ field, reason }], key: null, ts: null } };
}

async function* ndjsonRows(lines: AsyncIterable<RawLine>, kind: ImportKind): AsyncGenerator<Row> {
  for await (const { line, bytes, truncated } of lines) {
    if (truncated) {
      yield rejected(line, bytes, '(row)', `line longer than ${bytes.length} bytes`);
      continue;
    }
    const text = decode(bytes);
    if (text === null) {
      yield rejected(line, bytes, '(row)', 'not valid UTF-8');
      continue;
    }
    if (text.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      yield rejected(line, bytes, '(row)', `invalid JSON: ${(err as Error).message}`);
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      yield rejected(line, bytes, '(row)', 'expected a JSON object');
      continue;
    }
    yield { line, bytes, result: convertRow(kind, new Map(Object.entries(parsed)), 'json') };
  }
}

async function* csvRows(lines: AsyncIterable<RawLine>, kind: ImportKind, maxRowBytes: number): AsyncGenerator<Row> {
  let header: string[] | null = null;
  // A record may span lines while a quoted field is open.
  let open: { line: number; parts: Buffer[]; text: string; bytes: number } | null = null;
  for await (const { line, bytes, truncated } of lines) {
    const text = decode(bytes);
    if (truncated || text === null) {
      if (!header) throw new ImportFileError(`line ${line}: the header is ${truncated ? 'too long' : 'not valid UTF-8'}`);
      const start = open?.line ?? line;
      open = null;
      yield rejected(start, bytes, '(row)', truncated ? `line longer than ${bytes.length} bytes` : 'not valid UTF-8');
      continue;
    }
    if (open) {
      open.parts.push(bytes);
      open.text += '\n' + text;
      open.bytes += bytes.length + 1;
    } else {
      if (text.trim() === '') continue;
      open = { line, parts: [bytes], text, bytes: bytes.length };
    }
    if (endsInsideQuotes(open.text) && open.bytes <= maxRowBytes) continue;
    const record = open;
    open = null;
    const raw = Buffer.concat(record.parts.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from('\n'), p])));
    if (endsInsideQuotes(record.text)) {
      yield rejected(record.line, raw, '(row)', `quoted field still open after ${maxRowBytes} bytes`);
      continue;
    }
    const split = splitCsvRecord(record.text);
    if (!header) {
      header = checkHeader(split, kind, record.line);
      continue;
    }
    if (!split.ok) {
      yield rejected(record.line, raw, '(row)', split.error);
      continue;
    }
    if (split.cells.length !== header.length) {
      yield rejected(record.line, raw, '(row)', `${split.cells.length} cells, the header has ${header.length} columns`);
      continue;
    }
    const cells = split.cells;
    const row = new Map(header.map((name, i) => [name, cells[i]]));
    yield { line: record.line, bytes: raw, result: convertRow(kind, row, 'csv') };
  }
  if (open) {
    yield rejected(open.line, Buffer.concat(open.parts), '(row)', 'unterminated quoted field at the end of the file');
  }
}

/** Column names of the header; a header naming unknown columns or missing required ones refuses the file. */
function checkHeader(split: ReturnType<typeof splitCsvRecord>, kind: ImportKind, line: number): string[] {
  if (!split.ok) throw new ImportFileError(`line ${line}: malformed header: ${split.error}`);
  const fields = kindFields(kind);
  const known = new Set(fields.map((f) => f.name));
  const seen = new Set<string>();
  for (const column of split.cells) {
    const name = fieldName(column);
    if (!known.has(name)) {
      throw new ImportFileError(`line ${line}: unknown column "${column}" for ${kind} (columns: ${fields.map((f) => snake(f.name)).join(', ')})`);
    }
    if (seen.has(name)) throw new ImportFileError(`line ${line}: column "${column}" appears twice`);
    seen.add(name);
  }
  const missing = fields.filter((f) => f.required && !seen.has(f.name)).map((f) => snake(f.name));
  if (missing.length > 0) throw new ImportFileError(`line ${line}: header lacks required columns: ${missing.join(', ')}`);
  return split.cells;
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}
