import type { KeyedTable } from './tables.ts';

/**
 * A list that only grows, kept in a table as blocks of `size` items under
 * `${prefix}${block number}`: appending rewrites the last block only, so a checkpoint of a
 * store on disk writes one small value however long the list. Its length is the caller's
 * to keep (a counter it already writes).
 */

/** Puts `item` as number `index` (the list's length before it). */
export function appendToBlocks<T>(table: KeyedTable<T[]>, prefix: string, size: number, index: number, item: T): void {
  const key = prefix + Math.floor(index / size);
  table.set(key, index % size === 0 ? [item] : [...table.get(key)!, item]);
}

/** The first `count` items, in order. */
export function readBlocks<T>(table: KeyedTable<T[]>, prefix: string, size: number, count: number): T[] {
  const items: T[] = [];
  for (let block = 0; block * size < count; block++) items.push(...table.get(prefix + block)!);
  return items;
}
