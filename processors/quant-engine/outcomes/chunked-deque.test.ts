import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK, clear, dropThrough, emptyDeque, pushMax, pushMin, timeAt, valueAt, windowFront, type ChunkedDeque, type DequeChunks } from './chunked-deque.ts';

type Triple = [time: number, sequence: number, value: number];

/** The same deque as a plain array: what the chunks must always read as. */
class ArrayDeque {
  entries: Triple[] = [];
  push(kind: 'max' | 'min', t: number, seq: number, v: number): void {
    const outlived = kind === 'max' ? (x: number) => x < v : (x: number) => x > v;
    while (this.entries.length > 0 && outlived(this.entries.at(-1)![2])) this.entries.pop();
    this.entries.push([t, seq, v]);
  }
  front(ts: number, start: number): Triple | undefined {
    return this.entries.find(([t, seq]) => t > ts && seq >= start);
  }
  dropThrough(ts: number): void {
    while (this.entries.length > 0 && this.entries[0][0] <= ts) this.entries.shift();
  }
}

/** Time and value of each live entry (the sequence is read by the searches only). */
function live(chunks: DequeChunks, d: ChunkedDeque): [number, number][] {
  const out: [number, number][] = [];
  for (let n = d.head; n < d.tail; n++) out.push([timeAt(chunks, d, n), valueAt(chunks, d, n)]);
  return out;
}

const timesAndValues = (entries: Triple[]) => entries.map(([t, , v]) => [t, v]);

/** The table holds the sealed chunks from head's on, each full; the open chunk the entries from its start to tail; a first per chunk with an entry. */
function expectChunksKept(table: Map<string, number[]>, d: ChunkedDeque): void {
  const headChunk = Math.floor(d.head / CHUNK);
  const openChunk = Math.floor(d.tail / CHUNK);
  const sealed = new Map<string, number>();
  for (let k = headChunk; k < openChunk; k++) sealed.set(`t\u0001${k}`, CHUNK * 3);
  expect(new Map([...table].map(([key, entries]) => [key, entries.length]))).toEqual(sealed);
  expect(d.open.length).toBe((d.tail - openChunk * CHUNK) * 3);
  expect(d.firsts.length).toBe((openChunk - headChunk + (d.tail % CHUNK > 0 ? 1 : 0)) * 3);
}

type Op = { op: 'push'; dt: number; v: number } | { op: 'drop'; back: number } | { op: 'clear' };

const ops = fc.array(
  fc.oneof(
    { weight: 40, arbitrary: fc.record({ op: fc.constant('push' as const), dt: fc.integer({ min: 0, max: 3 }), v: fc.integer({ min: 0, max: 40 }) }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('drop' as const), back: fc.integer({ min: 0, max: 300 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('clear' as const) }) },
  ),
  { maxLength: 300, size: 'max' },
);

describe('a chunked deque', () => {
  for (const kind of ['max', 'min'] as const) {
    it(`reads as a plain ${kind} deque after any pushes, drops and clears, keeping only the chunks it needs`, () => {
      fc.assert(
        fc.property(ops, (sequence: Op[]) => {
          const table = new Map<string, number[]>();
          const chunks: DequeChunks = { table, prefix: 't\u0001' };
          const d = emptyDeque();
          const model = new ArrayDeque();
          let t = 0;
          // Sequences count the pushes, as the outcomes module's count the ticks pushed.
          let pushed = 0;
          for (const step of sequence) {
            if (step.op === 'push') {
              t += step.dt;
              const seq = pushed++;
              // A trend the deque keeps (falling for a max deque), with noise that pops some: deques of many chunks.
              const v = (kind === 'max' ? -2 * seq : 2 * seq) + step.v;
              (kind === 'max' ? pushMax : pushMin)(chunks, d, t, seq, v);
              model.push(kind, t, seq, v);
            } else if (step.op === 'drop') {
              dropThrough(chunks, d, t - step.back);
              model.dropThrough(t - step.back);
            } else {
              clear(chunks, d);
              model.entries = [];
            }
            expect(live(chunks, d)).toEqual(timesAndValues(model.entries));
            expectChunksKept(table, d);
            for (const ts of [-1, t - 100, t - 20, t - 1]) {
              for (const start of [0, pushed >> 2, pushed >> 1, pushed - 1, pushed]) {
                const at = windowFront(chunks, d, ts, start);
                const expected = model.front(ts, start);
                if (expected === undefined) expect(at).toBe(d.tail);
                else expect([timeAt(chunks, d, at), valueAt(chunks, d, at)]).toEqual([expected[0], expected[2]]);
              }
            }
          }
        }),
        { numRuns: 30, seed: 47 },
      );
    });
  }

  it('writes a chunk to the table only as it fills, however long the deque', () => {
    const writes: string[] = [];
    const table = new Map<string, number[]>();
    const recording = { get: (k: string) => table.get(k), has: (k: string) => table.has(k), delete: (k: string) => table.delete(k), entries: () => table.entries(), set: (k: string, v: number[]) => (writes.push(k), table.set(k, v)) };
    const chunks: DequeChunks = { table: recording, prefix: 't\u0001' };
    const d = emptyDeque();
    // Rising prices: a min deque keeps them all.
    for (let i = 0; i < 10 * CHUNK; i++) pushMin(chunks, d, i, i, i);
    expect(writes).toHaveLength(10);
    writes.length = 0;
    for (let i = 10 * CHUNK; i < 11 * CHUNK - 1; i++) pushMin(chunks, d, i, i, i);
    expect(writes).toEqual([]);
    pushMin(chunks, d, 11 * CHUNK, 11 * CHUNK, 11 * CHUNK);
    expect(writes).toEqual(['t\u000110']);
    expect(d.firsts.length).toBe(11 * 3);
  });

  it('drops, at a cut equal to a chunk\'s first time, that first entry too', () => {
    const chunks: DequeChunks = { table: new Map(), prefix: 't\u0001' };
    const d = emptyDeque();
    for (let i = 0; i < 3 * CHUNK; i++) pushMin(chunks, d, i, i, i);
    dropThrough(chunks, d, 2 * CHUNK);
    expect(d.head).toBe(2 * CHUNK + 1);
    expect(timeAt(chunks, d, d.head)).toBe(2 * CHUNK + 1);
  });
});
