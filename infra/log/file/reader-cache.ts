import type { StoredRecord } from './record-format.ts';
import { PartitionReader } from './segments.ts';

/**
 * Readers of one-off reads (EventLog.read), kept open where they stopped. A reader opened at
 * an offset scans its segment to reach it (from the start, or in the newest segment from the
 * entry of its index before it, up to 1 MiB away), so a caller that follows a growing
 * topic by reading on from its last offset (the stream's feed, the webhook dispatcher) paid a
 * scan of the whole segment per read; one that reads on from where a kept reader stopped now
 * continues it. The least recently used readers are closed beyond `capacity`.
 */
export class ReaderCache {
  /** Idle readers by `<partition dir>\0<position>`, least recently used first. */
  private readonly idle = new Map<string, PartitionReader>();

  constructor(private readonly capacity = 64) {}

  async read(dir: string, offset: number, max: number): Promise<StoredRecord[]> {
    const key = `${dir}\u0000${offset}`;
    const kept = this.idle.get(key);
    if (kept) this.idle.delete(key); // in use: a concurrent read of the same place opens its own
    const reader = kept ?? new PartitionReader(dir, offset);
    let records: StoredRecord[];
    try {
      records = await reader.read(max);
    } catch (err) {
      await reader.close();
      throw err;
    }
    this.keep(`${dir}\u0000${reader.position}`, reader);
    return records;
  }

  async close(): Promise<void> {
    const readers = [...this.idle.values()];
    this.idle.clear();
    await Promise.all(readers.map((r) => r.close()));
  }

  private keep(key: string, reader: PartitionReader): void {
    const other = this.idle.get(key);
    if (other) void other.close();
    this.idle.delete(key);
    this.idle.set(key, reader);
    for (const [oldestKey, oldest] of this.idle) {
      if (this.idle.size <= this.capacity) break;
      this.idle.delete(oldestKey);
      void oldest.close();
    }
  }
}
