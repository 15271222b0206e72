/**
 * A processor's state kept per key: named tables of values by key, the part of a Map's
 * interface a processor uses. Where the tables live is the runtime's choice, not the
 * processor's: plain Maps (the whole state checkpointed as one blob, and what the given/then
 * tests use), or a task's store on disk (task-store.ts), which checkpoints only the keys
 * changed since the last checkpoint.
 *
 * A value read from a table is the table's own: change it by setting a new value, never in
 * place, or a store on disk does not see the change.
 */
export interface KeyedTable<V> {
  get(key: string): V | undefined;
  has(key: string): boolean;
  set(key: string, value: V): unknown;
  delete(key: string): unknown;
  /** Every entry; a store on disk reads them all, so call it once at start, not per record. */
  entries(): Iterable<[string, V]>;
}

/**
 * Where a processor's tables come from: a table per name, the same one for the same name.
 * `cacheEntries` bounds the values a store on disk keeps in memory once read or committed:
 * a table written once per key and read back only at start needs next to none.
 */
export interface TableSource {
  table<V>(name: string, options?: { cacheEntries?: number }): KeyedTable<V>;
}

/** Tables as Maps, checkpointed whole with the rest of the state. */
export const IN_MEMORY_TABLES: TableSource = { table: () => new Map() };
