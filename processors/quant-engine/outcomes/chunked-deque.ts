import type { KeyedTable } from '../../runtime/state/tables.ts';

/**
 * A monotonic deque of (time, sequence, value) triples whose times and sequences never
 * decrease from front to back, kept in chunks of CHUNK triples, so that a store on disk writes
 * at a checkpoint what changed, not the whole deque (a token's outcome tracks hold a week of
 * its extremes).
 *
 * Entries are numbered as appended; chunk k holds numbers [k·CHUNK, (k+1)·CHUNK) and the live
 * entries are [head, tail). The chunk that tail is in, the open one, lives in the deque's own
 * value, where pushes change it; a chunk that fills is sealed: written to the table as a value
 * of its own, read back only by a search or a pop that reaches into it. The table holds the
 * sealed chunks from head's on. The deque's value also keeps the first triple of each chunk
 * from head's on, so a search picks its chunk without reading any, then reads one.
 */
export interface ChunkedDeque {
  head: number;
  tail: number;
  /** The first triple of each chunk from head's to the open one (if it holds any entry), flattened: time, sequence, value. */
  firsts: number[];
  /** The open chunk's entries below tail, dropped ones included, flattened as firsts. */
  open: number[];
}

/** Where one deque's sealed chunks are: a table and the prefix of their keys, the chunk number following. */
export interface DequeChunks {
  table: KeyedTable<number[]>;
  prefix: string;
}

/** Triples per chunk: the open chunk stays under a KiB while the firsts stay a few per deque. */
export const CHUNK = 32;
/** Floats per triple. */
const STRIDE = 3;
const TIME = 0;
const SEQUENCE = 1;
const VALUE = 2;

export function emptyDeque(): ChunkedDeque {
  return { head: 0, tail: 0, firsts: [], open: [] };
}

const chunkOf = (n: number) => Math.floor(n / CHUNK);

/** Chunk k's entries: the open chunk's, or a sealed one's from the table. */
function entriesOf(chunks: DequeChunks, d: ChunkedDeque, k: number): number[] {
  if (k === chunkOf(d.tail)) return d.open;
  const sealed = chunks.table.get(chunks.prefix + k);
  if (sealed === undefined) throw new Error(`deque chunk ${chunks.prefix}${k} is missing`);
  return sealed;
}

/** Appends to a max deque, first dropping the smaller values the new one outlives; equal ones stay (earliest peak). */
export function pushMax(chunks: DequeChunks, d: ChunkedDeque, t: number, seq: number, v: number): void {
  while (d.tail > d.head && lastValue(chunks, d) < v) pop(chunks, d);
  append(chunks, d, t, seq, v);
}

/** Appends to a min deque, first dropping the larger values the new one outlives. */
export function pushMin(chunks: DequeChunks, d: ChunkedDeque, t: number, seq: number, v: number): void {
  while (d.tail > d.head && lastValue(chunks, d) > v) pop(chunks, d);
  append(chunks, d, t, seq, v);
}

/** The last live entry's value: the open chunk's last, or the last of the sealed chunk before an empty open one. */
function lastValue(chunks: DequeChunks, d: ChunkedDeque): number {
  const entries = d.open.length > 0 ? d.open : entriesOf(chunks, d, chunkOf(d.tail) - 1);
  return entries[entries.length - STRIDE + VALUE];
}

/** Drops the last live entry; from an empty open chunk, the sealed one before it is opened again (taken from the table) first. */
function pop(chunks: DequeChunks, d: ChunkedDeque): void {
  if (d.open.length === 0) {
    const k = chunkOf(d.tail) - 1;
    d.open = entriesOf(chunks, d, k);
    chunks.table.delete(chunks.prefix + k);
  }
  d.tail--;
  d.open.length -= STRIDE;
  // A chunk left with no entry has no first.
  if (d.tail % CHUNK === 0) d.firsts.length -= STRIDE;
}

function append(chunks: DequeChunks, d: ChunkedDeque, t: number, seq: number, v: number): void {
  if (d.tail % CHUNK === 0) d.firsts.push(t, seq, v);
  d.open.push(t, seq, v);
  d.tail++;
  if (d.tail % CHUNK === 0) {
    chunks.table.set(chunks.prefix + (chunkOf(d.tail) - 1), d.open);
    d.open = [];
  }
}

/**
 * Number of the first live entry after time `ts` with sequence at least `start` (tail when
 * none): both only grow along the deque, so the chunk is found by its first triple.
 */
export function windowFront(chunks: DequeChunks, d: ChunkedDeque, ts: number, start: number): number {
  if (d.head === d.tail) return d.tail;
  const inWindow = (time: number, sequence: number) => time > ts && sequence >= start;
  const firsts = d.firsts;
  // The first chunk whose first entry is in the window.
  let lo = 0;
  let hi = firsts.length / STRIDE;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (inWindow(firsts[mid * STRIDE + TIME], firsts[mid * STRIDE + SEQUENCE])) hi = mid;
    else lo = mid + 1;
  }
  if (lo === 0) return d.head;
  // Else the entry is in the chunk before it, or is that chunk's first.
  const k = chunkOf(d.head) + lo - 1;
  const begin = k * CHUNK;
  const entries = entriesOf(chunks, d, k);
  let a = Math.max(d.head, begin);
  let b = Math.min(d.tail, begin + CHUNK);
  while (a < b) {
    const mid = (a + b) >>> 1;
    const at = (mid - begin) * STRIDE;
    if (inWindow(entries[at + TIME], entries[at + SEQUENCE])) b = mid;
    else a = mid + 1;
  }
  return a;
}

/** The time of live entry number n. */
export function timeAt(chunks: DequeChunks, d: ChunkedDeque, n: number): number {
  return field(chunks, d, n, TIME);
}

/** The value of live entry number n. */
export function valueAt(chunks: DequeChunks, d: ChunkedDeque, n: number): number {
  return field(chunks, d, n, VALUE);
}

function field(chunks: DequeChunks, d: ChunkedDeque, n: number, offset: number): number {
  const k = chunkOf(n);
  if (n === k * CHUNK) return d.firsts[(k - chunkOf(d.head)) * STRIDE + offset];
  return entriesOf(chunks, d, k)[(n - k * CHUNK) * STRIDE + offset];
}

/** Drops the entries at or before time ts from the front; a sealed chunk left behind is deleted, unread when the next one's first is too. */
export function dropThrough(chunks: DequeChunks, d: ChunkedDeque, ts: number): void {
  while (d.head < d.tail) {
    const k = chunkOf(d.head);
    const next = (k + 1) * CHUNK;
    // The entry to stop at is in this chunk, or there is no entry after it: scanned, and done.
    const last = next >= d.tail || d.firsts[STRIDE + TIME] > ts;
    if (last) {
      const entries = entriesOf(chunks, d, k);
      const end = Math.min(d.tail, next);
      while (d.head < end && entries[(d.head - k * CHUNK) * STRIDE + TIME] <= ts) d.head++;
      if (d.head < next) return;
    }
    chunks.table.delete(chunks.prefix + k);
    d.firsts.splice(0, STRIDE);
    d.head = next;
    if (last) return;
  }
}

/** Empties the deque, deleting its sealed chunks. */
export function clear(chunks: DequeChunks, d: ChunkedDeque): void {
  for (let k = chunkOf(d.head); k < chunkOf(d.tail); k++) chunks.table.delete(chunks.prefix + k);
  d.head = 0;
  d.tail = 0;
  d.firsts = [];
  d.open = [];
}
