import { mkdir, open as openFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import type { KeyedTable, TableSource } from './tables.ts';

/**
 * A processor task's state on disk, as Kafka Streams keeps a task's state store: tables of
 * values by key in an LMDB file (memory-mapped, transactional, values encoded with msgpack),
 * a bounded cache of recently read keys in front, and checkpoints that write only the keys
 * changed since the last one, with the input positions they cover, in one transaction. A kill
 * at any moment, inside that transaction too, leaves the file at the last committed checkpoint.
 */

/** Bump when the file's layout changes: an older file then gives a clear error, never a silent fresh start. */
const STORE_FORMAT = 1;
const META_KEY = '\u0001meta';
/** Clean entries kept in memory per table; changed ones stay until the next commit. */
const DEFAULT_CACHE_ENTRIES = 50_000;

/** What a checkpoint records beside the state: the input it covers. */
export interface TaskPosition {
  /** Next offset to process, per input source. */
  positions: Record<string, number>;
  /** Largest event time processed, -Infinity before the first record. */
  maxEventTime: number;
}

interface StoredMeta {
  format: number;
  stateVersion: number;
  positions: Record<string, number>;
  /** null for -Infinity, which msgpack keeps but JSON-minded readers of the file would not. */
  maxEventTime: number | null;
}

/** A store file that cannot be used as it is: the message names the file and how to rebuild it. */
export class StateStoreError extends Error {}

/** LMDB's magic number in the first meta page (at byte 24 in the format lmdb-js writes). */
const LMDB_MAGIC = 0xbeefc0de;
const LMDB_MAGIC_AT = 24;

/**
 * Whether the file, if it has any bytes, begins as an LMDB file: LMDB reads a file that does
 * not without checking it (a file of other bytes crashes the process), so it is
 * checked first.
 */
async function looksLikeLmdb(file: string): Promise<boolean> {
  const handle = await openFile(file, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (handle === null) return true;
  try {
    const head = Buffer.alloc(LMDB_MAGIC_AT + 4);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === 0 || (bytesRead === head.length && head.readUInt32LE(LMDB_MAGIC_AT) === LMDB_MAGIC);
  } finally {
    await handle.close();
  }
}

const DELETED = Symbol('deleted');

class StoredTable<V> implements KeyedTable<V> {
  /** Changes since the last commit, in the order made. */
  readonly changed = new Map<string, V | typeof DELETED>();
  /** Clean values read from the file, least recently used first. */
  private readonly cache = new Map<string, V | typeof DELETED>();

  constructor(
    private readonly db: RootDatabase,
    private readonly prefix: string,
    private readonly cacheEntries: number,
  ) {}

  get(key: string): V | undefined {
    const changed = this.changed.get(key);
    if (changed !== undefined) return changed === DELETED ? undefined : changed;
    let value = this.cache.get(key);
    if (value === undefined) {
      value = (this.db.get(this.prefix + key) as V | undefined) ?? DELETED;
      if (this.cache.size >= this.cacheEntries) this.cache.delete(this.cache.keys().next().value!);
    } else this.cache.delete(key); // re-inserted below: the most recently used
    this.cache.set(key, value);
    return value === DELETED ? undefined : value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  set(key: string, value: V): this {
    this.cache.delete(key);
    this.changed.set(key, value);
    return this;
  }

  delete(key: string): boolean {
    const had = this.has(key);
    this.cache.delete(key);
    this.changed.set(key, DELETED);
    return had;
  }

  *entries(): Iterable<[string, V]> {
    for (const { key, value } of this.db.getRange({ start: this.prefix, end: `${this.prefix}\uffff` })) {
      const name = (key as string).slice(this.prefix.length);
      if (!this.changed.has(name)) yield [name, value as V];
    }
    for (const [name, value] of this.changed) if (value !== DELETED) yield [name, value];
  }

  /** Writes the changes into the open transaction; returns how many keys it wrote. */
  writeChanges(): number {
    for (const [key, value] of this.changed) {
      if (value === DELETED) this.db.removeSync(this.prefix + key);
      else this.db.putSync(this.prefix + key, value);
    }
    return this.changed.size;
  }

  /** After a commit, the changes are what the file holds. */
  settle(): void {
    for (const [key, value] of this.changed) {
      if (this.cache.size >= this.cacheEntries) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, value);
    }
    this.changed.clear();
  }

  /** Drops what was changed or read since the last commit: the task resumes from the file. */
  discard(): void {
    this.changed.clear();
    this.cache.clear();
  }
}

export class TaskStateStore implements TableSource {
  private readonly tables = new Map<string, StoredTable<unknown>>();

  private constructor(
    readonly file: string,
    private readonly db: RootDatabase,
    private readonly stateVersion: number,
    private readonly cacheEntries: number,
  ) {}

  /**
   * Opens (or creates) a task's store file. A file of another state version is emptied (the
   * task then rebuilds its state from offset 0, as a version change requires); one that is not
   * a store file, or of an unknown format, is refused with a StateStoreError.
   */
  static async open(file: string, stateVersion: number, cacheEntries = DEFAULT_CACHE_ENTRIES): Promise<{ store: TaskStateStore; reset: boolean }> {
    await mkdir(dirname(file), { recursive: true });
    const rebuild = `delete ${file} and ${file}-lock to rebuild this task's state: the processor then replays its inputs from offset 0`;
    if (!(await looksLikeLmdb(file))) throw new StateStoreError(`${file} is not a state store file (no LMDB header); ${rebuild}`);
    let db: RootDatabase;
    try {
      db = open({ path: file, compression: false });
    } catch (err) {
      throw new StateStoreError(`${file} is not a readable state store (${(err as Error).message}); ${rebuild}`);
    }
    let meta: StoredMeta | undefined;
    try {
      meta = db.get(META_KEY) as StoredMeta | undefined;
    } catch (err) {
      await db.close();
      throw new StateStoreError(`${file} is corrupt (${(err as Error).message}); ${rebuild}`);
    }
    if (meta !== undefined && meta.format !== STORE_FORMAT) {
      await db.close();
      throw new StateStoreError(`${file} was written in state store format ${String(meta.format)}, which this version does not read (it reads ${STORE_FORMAT}); ${rebuild}`);
    }
    const reset = meta !== undefined && meta.stateVersion !== stateVersion;
    if (reset) db.clearSync();
    return { store: new TaskStateStore(file, db, stateVersion, cacheEntries), reset };
  }

  table<V>(name: string): KeyedTable<V> {
    if (name.includes('\u0000')) throw new Error(`table name ${JSON.stringify(name)} holds the separator`);
    let table = this.tables.get(name);
    if (!table) this.tables.set(name, (table = new StoredTable<unknown>(this.db, `${name}\u0000`, this.cacheEntries)));
    return table as StoredTable<V>;
  }

  /** The input the last commit covers (read from the file: another thread may have held the task since); undefined before the first. */
  position(): TaskPosition | undefined {
    const meta = this.db.get(META_KEY) as StoredMeta | undefined;
    return meta === undefined ? undefined : { positions: meta.positions, maxEventTime: meta.maxEventTime ?? -Infinity };
  }

  /** Writes every table's changes and the position in one transaction; returns how many keys it wrote. */
  commit(position: TaskPosition): { keysWritten: number } {
    const meta: StoredMeta = {
      format: STORE_FORMAT,
      stateVersion: this.stateVersion,
      positions: position.positions,
      maxEventTime: position.maxEventTime === -Infinity ? null : position.maxEventTime,
    };
    let keysWritten = 0;
    this.db.transactionSync(() => {
      for (const table of this.tables.values()) keysWritten += table.writeChanges();
      this.db.putSync(META_KEY, meta);
    });
    for (const table of this.tables.values()) table.settle();
    return { keysWritten };
  }

  /** Forgets every change since the last commit, for a task that resumes from it. */
  discard(): void {
    for (const table of this.tables.values()) table.discard();
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}
