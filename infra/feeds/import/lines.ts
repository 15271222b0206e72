/**
 * Splits a byte stream into lines without decoding it, so a rejected row can be kept as
 * exactly the bytes the file held. Lines end at \n; a \r before it (CRLF files) is part of
 * the terminator. A UTF-8 byte-order mark at the start of the file is dropped.
 */

export interface RawLine {
  /** 1-based line number in the file. */
  line: number;
  bytes: Buffer;
  /** Set when the line was longer than the limit: `bytes` then holds only its beginning. */
  truncated: boolean;
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export async function* readLines(
  chunks: AsyncIterable<Buffer>,
  maxLineBytes: number,
  onBytes?: (total: number) => void,
): AsyncGenerator<RawLine> {
  let parts: Buffer[] = [];
  let partBytes = 0;
  let truncated = false;
  let line = 1;
  let total = 0;
  let first = true;

  const take = (tail: Buffer): RawLine => {
    let bytes = parts.length === 0 ? tail : Buffer.concat([...parts, tail]);
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
    const out = { line: line++, bytes, truncated };
    parts = [];
    partBytes = 0;
    truncated = false;
    return out;
  };
  const keep = (piece: Buffer): void => {
    // Past the limit the rest of the line is dropped; only its start is kept for the report.
    const room = maxLineBytes - partBytes;
    if (piece.length > room) truncated = true;
    const kept = piece.length > room ? piece.subarray(0, Math.max(0, room)) : piece;
    if (kept.length > 0) {
      parts.push(Buffer.from(kept));
      partBytes += kept.length;
    }
  };

  for await (let chunk of chunks) {
    total += chunk.length;
    if (first) {
      first = false;
      if (chunk.subarray(0, 3).equals(BOM)) chunk = chunk.subarray(3);
    }
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      const piece = chunk.subarray(start, nl);
      if (truncated || partBytes + piece.length > maxLineBytes) {
        keep(piece);
        yield take(Buffer.alloc(0));
      } else {
        yield take(piece);
      }
      start = nl + 1;
    }
    if (start < chunk.length) keep(chunk.subarray(start));
    onBytes?.(total);
  }
  if (partBytes > 0 || truncated) yield take(Buffer.alloc(0));
}
