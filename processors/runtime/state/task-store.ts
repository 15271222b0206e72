import { mkdir, open as openFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { decodeStateValue, encodeStateValue } from './encoding.ts';
import type { KeyedTable, TableSource } from './tables.ts';

/**
 * A processor task's state on disk, as Kafka Streams keeps a task's state store: tables of
 * values by key in an LMDB file (memory-mapped, transactional, values encoded with msgpack),
 * a bounded cache of recently read keys in front, and checkpoints that write only the keys
 * changed since the last one, with the input positions they cover, in one transaction. A kill
 * at any moment, inside that transaction too, leaves the file at the last committed checkpoint.
 */

/**
 * Bump when the file's layout changes: a file of an earlier format is emptied and the task
 * rebuilds its state (logged); one of a later format gives a clear error. 2: values encoded
 * by encoding.ts, as the changelog carries them; the format under a key of its own.
 */
const STORE_FORMAT = 2;
const FORMAT_KEY = '\u0001format';
const META_KEY = '\u0001meta';
/** The number of the task's latest holder: each process that takes the task counts it up. */
const HOLDER_KEY = '\u0001holder';
/** Which process that holder is, for the messages of those it fenced out (and for operators). */
const HOLDER_PROCESS_KEY = '\u0001holder-process';
/** Clean entries kept in memory per table; changed ones stay until the next commit. */
const DEFAULT_CACHE_ENTRIES = 50_000;

/** What a checkpoint records beside the state: the input it covers. */
export interface TaskPosition {
  /** Next offset to process, per input source. */
  positions: Record<string, number>;
  /** Largest event time processed, -Infinity before the first record. */
  maxEventTime: number;
}

/** How far the store has read or written the task's changelog (changelog.ts). */
export interface ChangelogPosition {
  /** The changelog offset after the last record the store holds. */
  next: number;
  /** The latest claim on the task met there: records of earlier holders after it are fenced out. */
  fence: number;
}

/** Between a table's name and a key in the file's keys (`<table>\u0000<key>`). */
const TABLE_SEPARATOR = '\u0000';

/** The table a key of the file belongs to; undefined for the store's own keys (format, position, holder). */
export function tableOfKey(key: string): string | undefined {
  const at = key.indexOf(TABLE_SEPARATOR);
  return at < 0 ? undefined : key.slice(0, at);
}

/** One changed key of a commit: its key in the file (`<table>\u0000<key>`) and its encoded value, null once deleted. */
export interface StateChange {
  key: string;
  bytes: Buffer | null;
}

interface StoredMeta {
  stateVersion: number;
  positions: Record<string, number>;
  /** null for -Infinity, which msgpack keeps but JSON-minded readers of the file would not. */
  maxEventTime: number | null;
  changelog?: ChangelogPosition;
}

/** The process that took a task last. */
export interface HolderProcess {
  pid: number;
  host: string;
}

/** A store file that cannot be used as it is: the message names the file and how to rebuild it. */
export class StateStoreError extends Error {}

/**
 * Another process took the task since this one did (a re-balance gave it the task while this
 * one was paused, say): this one may neither commit nor read what the other wrote.
 */
export class TaskTakenOverError extends Error {}

/** LMDB's magic number in the first meta page (at byte 24 in the format lmdb-js writes). */
const LMDB_MAGIC = 0xbeefc0de;
const LMDB_MAGIC_AT = 24;

/**
 * What the file begins as: LMDB reads a file that does not begin as an LMDB file without
 * checking it (a file of other bytes, or one whose header another process is still writing,
 * crashes the process), so it is checked first.
 */
async function fileHeader(file: string): Promise<'absent' | 'empty' | 'lmdb' | 'other'> {
  const handle = await openFile(file, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (handle === null) return 'absent';
  try {
    const head = Buffer.alloc(LMDB_MAGIC_AT + 4);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (bytesRead === 0) return 'empty';
    return bytesRead === head.length && head.readUInt32LE(LMDB_MAGIC_AT) === LMDB_MAGIC ? 'lmdb' : 'other';
  } finally {
    await handle.close();
  }
}

/** The input the file's last commit covers; undefined before the first. */
function positionOf(db: RootDatabase): TaskPosition | undefined {
  const meta = readValue<StoredMeta>(db, META_KEY);
  return meta === undefined ? undefined : { positions: meta.positions, maxEventTime: meta.maxEventTime ?? -Infinity };
}

const DELETED = Symbol('deleted');

function readValue<T>(db: RootDatabase, key: string): T | undefined {
  const bytes = db.get(key) as Buffer | undefined;
  return bytes === undefined ? undefined : (decodeStateValue(bytes) as T);
}

/**
 * A bounded cache of recently used values in two generations: a value put or found goes into
 * the young one; when that holds half the bound it becomes the old one, and the old one before
 * it is dropped whole. Every operation costs O(1): an LRU kept in one Map pays, at each
 * eviction from its front, for the holes its deletions leave there.
 */
class RecentValues<V> {
  private young = new Map<string, V>();
  private old = new Map<string, V>();

  constructor(private readonly bound: number) {}

  get(key: string): V | undefined {
    const young = this.young.get(key);
    if (young !== undefined) return young;
    const old = this.old.get(key);
    if (old !== undefined) {
      this.old.delete(key);
      this.put(key, old);
    }
    return old;
  }

  put(key: string, value: V): void {
    if (this.bound === 0) return;
    this.young.set(key, value);
    if (this.young.size >= Math.max(1, this.bound >> 1)) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }
}

class StoredTable<V> implements KeyedTable<V> {
  /** Changes since the last commit, in the order made. */
  private readonly changed = new Map<string, V | typeof DELETED>();
  /** Clean values read from the file or committed (DELETED: known to be absent). */
  private readonly cache: RecentValues<V | typeof DELETED>;

  constructor(
    private readonly db: RootDatabase,
    private readonly prefix: string,
    cacheEntries: number,
    private readonly assertHeld: () => void,
  ) {
    this.cache = new RecentValues(cacheEntries);
  }

  get(key: string): V | undefined {
    const changed = this.changed.get(key);
    if (changed !== undefined) return changed === DELETED ? undefined : changed;
    let value = this.cache.get(key);
    if (value === undefined) {
      // Both reads see one snapshot of the file (lmdb-js renews its read transaction only
      // between event-loop turns): a value read here was written by this holder or before it.
      this.assertHeld();
      value = readValue<V>(this.db, this.prefix + key) ?? DELETED;
      this.cache.put(key, value);
    }
    return value === DELETED ? undefined : value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  // A change leaves the cache as it is: reads look at the changes first, and a commit puts
  // each changed value into the cache's young generation, which reads look at before the old.
  set(key: string, value: V): this {
    this.changed.set(key, value);
    return this;
  }

  /** Deletes without reading: whether the key was there is not told (no caller needs it). */
  delete(key: string): void {
    this.changed.set(key, DELETED);
  }

  *entries(): Iterable<[string, V]> {
    this.assertHeld();
    for (const { key, value } of this.db.getRange({ start: this.prefix, end: `${this.prefix}\uffff` })) {
      const name = (key as string).slice(this.prefix.length);
      if (!this.changed.has(name)) yield [name, decodeStateValue(value as Buffer) as V];
    }
    for (const [name, value] of this.changed) if (value !== DELETED) yield [name, value];
  }

  /** The changes since the last commit, encoded, onto `out`. */
  collectChanges(out: StateChange[]): void {
    for (const [key, value] of this.changed) out.push({ key: this.prefix + key, bytes: value === DELETED ? null : encodeStateValue(value) });
  }

  /** After a commit, the changes are what the file holds. */
  settle(): void {
    for (const [key, value] of this.changed) this.cache.put(key, value);
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
  /** This handle's number in the task's holders (HOLDER_KEY), set by take(). */
  private holder = 0;
  /** Throws a TaskTakenOverError once another holder took the task. */
  readonly assertHeld = (): void => {
    if (readValue(this.db, HOLDER_KEY) === this.holder) return;
    const by = readValue<HolderProcess>(this.db, HOLDER_PROCESS_KEY);
    throw new TaskTakenOverError(`another process${by ? ` (pid ${by.pid} on ${by.host})` : ''} took the task of ${this.file} over from this one`);
  };

  private constructor(
    readonly file: string,
    private readonly db: RootDatabase,
    private readonly stateVersion: number,
    private readonly cacheEntries: number,
  ) {}

  /**
   * Opens (or creates) a task's store file and takes the task. A file of another state version
   * or an earlier format is emptied (the task then rebuilds its state from offset 0, as such a
   * change requires); one that is not a store file, or of a later format, is refused with a
   * StateStoreError.
   */
  static async open(file: string, stateVersion: number, cacheEntries = DEFAULT_CACHE_ENTRIES): Promise<{ store: TaskStateStore; reset: boolean }> {
    await mkdir(dirname(file), { recursive: true });
    const rebuild = `delete ${file} and ${file}-lock to rebuild this task's state: the processor then replays its inputs from offset 0`;
    if ((await fileHeader(file)) === 'other') throw new StateStoreError(`${file} is not a state store file (no LMDB header); ${rebuild}`);
    let db: RootDatabase;
    try {
      db = open({ path: file, compression: false, encoding: 'binary' });
    } catch (err) {
      throw new StateStoreError(`${file} is not a readable state store (${(err as Error).message}); ${rebuild}`);
    }
    let format: number | undefined;
    let meta: StoredMeta | undefined;
    let empty: boolean;
    try {
      const written = db.get(FORMAT_KEY) as Buffer | undefined;
      format = written === undefined ? undefined : Number(written.toString('ascii'));
      empty = db.getKeysCount() === 0;
      if (format === STORE_FORMAT) meta = readValue<StoredMeta>(db, META_KEY);
    } catch (err) {
      await db.close();
      throw new StateStoreError(`${file} is corrupt (${(err as Error).message}); ${rebuild}`);
    }
    if (format !== undefined && !(format <= STORE_FORMAT)) {
      await db.close();
      throw new StateStoreError(`${file} was written in state store format ${String(format)}, which this version does not read (it reads ${STORE_FORMAT}); ${rebuild}`);
    }
    const reset = !empty && (format !== STORE_FORMAT || (meta !== undefined && meta.stateVersion !== stateVersion));
    if (reset) db.clearSync();
    if (format !== STORE_FORMAT) db.putSync(FORMAT_KEY, Buffer.from(String(STORE_FORMAT), 'ascii'));
    const store = new TaskStateStore(file, db, stateVersion, cacheEntries);
    store.take();
    return { store, reset };
  }

  /**
   * Takes the task, as the process that resumes it from the last commit: drops the changes
   * since then and the values cached, and fences out every earlier holder (with a data dir
   * shared by several processes, one paused past its group's timeout may go on for a while
   * before it learns that the task moved): from now on their reads and commits fail.
   */
  take(): void {
    this.db.transactionSync(() => {
      this.holder = (readValue<number>(this.db, HOLDER_KEY) ?? 0) + 1;
      this.db.putSync(HOLDER_KEY, encodeStateValue(this.holder));
      this.db.putSync(HOLDER_PROCESS_KEY, encodeStateValue({ pid: process.pid, host: hostname() } satisfies HolderProcess));
    });
    for (const table of this.tables.values()) table.discard();
  }

  table<V>(name: string, options: { cacheEntries?: number } = {}): KeyedTable<V> {
    if (name.includes(TABLE_SEPARATOR)) throw new Error(`table name ${JSON.stringify(name)} holds the separator`);
    let table = this.tables.get(name);
    if (!table) this.tables.set(name, (table = new StoredTable<unknown>(this.db, name + TABLE_SEPARATOR, options.cacheEntries ?? this.cacheEntries, this.assertHeld)));
    return table as StoredTable<V>;
  }

  /** The input the last commit covers (read from the file: another thread may have held the task since); undefined before the first. */
  position(): TaskPosition | undefined {
    return positionOf(this.db);
  }

  /** How far the store follows the task's changelog; undefined when it never has. */
  changelogPosition(): ChangelogPosition | undefined {
    return readValue<StoredMeta>(this.db, META_KEY)?.changelog;
  }

  /** The bytes the last commit left under a key of the file (`<table>\u0000<key>`), null when none. */
  committedBytes(key: string): Buffer | null {
    return (this.db.get(key) as Buffer | undefined) ?? null;
  }

  /** The keys changed since the last commit, encoded as a commit writes them (for the changelog). */
  changes(): StateChange[] {
    const out: StateChange[] = [];
    for (const table of this.tables.values()) table.collectChanges(out);
    return out;
  }

  /**
   * Writes the changes (every table's, or those already taken with changes()) and the
   * position in one transaction; returns how many keys it wrote. Refused with a
   * TaskTakenOverError once another holder took the task.
   */
  commit(position: TaskPosition, changes = this.changes(), changelog?: ChangelogPosition): { keysWritten: number } {
    this.write(changes, position, changelog);
    for (const table of this.tables.values()) table.settle();
    return { keysWritten: changes.length };
  }

  /**
   * Writes what the task's changelog holds past the store (changelog.ts), as changes of
   * other holders: the tables' cached values and uncommitted changes are dropped. Without a
   * position the store keeps the one it has.
   */
  restore(changes: StateChange[], position: TaskPosition | undefined, changelog: ChangelogPosition): void {
    this.write(changes, position, changelog);
    for (const table of this.tables.values()) table.discard();
  }

  /** Empties the store, for a task that restores its whole state from elsewhere. */
  clear(): void {
    this.db.transactionSync(() => {
      this.assertHeld();
      const keys = [...this.db.getKeys({})].filter((key) => key !== FORMAT_KEY && key !== HOLDER_KEY && key !== HOLDER_PROCESS_KEY);
      for (const key of keys) this.db.removeSync(key);
    });
    for (const table of this.tables.values()) table.discard();
  }

  private write(changes: StateChange[], position: TaskPosition | undefined, changelog: ChangelogPosition | undefined): void {
    this.db.transactionSync(() => {
      this.assertHeld();
      for (const { key, bytes } of changes) {
        if (bytes === null) this.db.removeSync(key);
        else this.db.putSync(key, bytes);
      }
      const before = readValue<StoredMeta>(this.db, META_KEY);
      const at = position ?? (before ? { positions: before.positions, maxEventTime: before.maxEventTime ?? -Infinity } : changelog && { positions: {}, maxEventTime: -Infinity });
      if (!at) return;
      const meta: StoredMeta = {
        stateVersion: this.stateVersion,
        positions: at.positions,
        maxEventTime: at.maxEventTime === -Infinity ? null : at.maxEventTime,
        changelog: changelog ?? before?.changelog,
      };
      this.db.putSync(META_KEY, encodeStateValue(meta));
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/**
 * Who holds a task and what its last commit covers, read without taking the task (a store
 * opened by TaskStateStore.open takes it): for a look from outside its processes. Undefined
 * parts: no holder or no commit yet.
 */
export async function readTaskHead(file: string): Promise<{ holder?: HolderProcess; position?: TaskPosition }> {
  return (await readOnly(file, (db) => ({ holder: readValue<HolderProcess>(db, HOLDER_PROCESS_KEY), position: positionOf(db) }))) ?? {};
}

/** What each table of a task's store holds: keys and bytes (keys and values), largest first; read without taking the task. */
export async function readTaskTables(file: string): Promise<{ table: string; keys: number; bytes: number }[]> {
  const tables = await readOnly(file, (db) => {
    const byName = new Map<string, { table: string; keys: number; bytes: number }>();
    for (const { key, value } of db.getRange({})) {
      const table = tableOfKey(key as string);
      if (table === undefined) continue;
      const entry = byName.get(table) ?? byName.set(table, { table, keys: 0, bytes: 0 }).get(table)!;
      entry.keys++;
      entry.bytes += Buffer.byteLength(key as string) + (value as Buffer).length;
    }
    return [...byName.values()].sort((a, b) => b.bytes - a.bytes);
  });
  return tables ?? [];
}

/**
 * Reads a store file without taking its task; undefined while the file has no LMDB header
 * (its first holder is still creating it, and LMDB would crash reading it).
 */
async function readOnly<T>(file: string, read: (db: RootDatabase) => T): Promise<T | undefined> {
  if ((await fileHeader(file)) !== 'lmdb') return undefined;
  const db = open({ path: file, readOnly: true, compression: false, encoding: 'binary' });
  try {
    return read(db);
  } finally {
    await db.close();
  }
}
