import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { writeFileAtomic } from '../../../infra/fs/atomic-write.ts';
import { processAlive } from '../../../infra/fs/process-alive.ts';
import type { Checkpoint, SerializedCheckpointStore } from './port.ts';

/**
 * Checkpoints as files under `<data dir>/state/<processor>/<partition>.ckpt` (v8 structured
 * serialisation, so state may hold Maps, Sets and typed arrays but no class instances).
 * Only this machine sees them: in the distributed mode they are the cache in front of the
 * store (cached.ts). Losing them only costs a replay of the inputs from offset 0, which
 * rebuilds the same state.
 */
export class FileCheckpoints implements SerializedCheckpointStore {
  constructor(private readonly dir: string) {}

  async load<State>(processor: string, partition: number): Promise<Checkpoint<State> | undefined> {
    await this.removeUnfinishedSaves(processor, partition);
    try {
      return deserialize(await readFile(this.path(processor, partition))) as Checkpoint<State>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  save<State>(processor: string, partition: number, checkpoint: Checkpoint<State>): Promise<void> {
    return this.saveSerialized(processor, partition, serialize(checkpoint));
  }

  async saveSerialized(processor: string, partition: number, bytes: Buffer): Promise<void> {
    await mkdir(join(this.dir, encodeURIComponent(processor)), { recursive: true });
    await writeFileAtomic(this.path(processor, partition), bytes);
  }

  /**
   * A save cut short by a crash leaves its temporary file (`<name>.<pid>.tmp`) behind; it is
   * never read, only in the way. Those of a live process are its saves in progress.
   */
  private async removeUnfinishedSaves(processor: string, partition: number): Promise<void> {
    const dir = join(this.dir, encodeURIComponent(processor));
    const names = await readdir(dir).catch(() => [] as string[]);
    const unfinished = names.filter((name) => {
      const pid = new RegExp(`^${partition}\\.ckpt\\.(\\d+)\\.tmp$`).exec(name)?.[1];
      return pid !== undefined && !processAlive(Number(pid));
    });
    await Promise.all(unfinished.map((name) => rm(join(dir, name), { force: true })));
  }

  private path(processor: string, partition: number): string {
    return checkpointFile(this.dir, processor, partition);
  }
}

/** Where FileCheckpoints keeps a task's checkpoint under `dir`. */
export function checkpointFile(dir: string, processor: string, partition: number): string {
  return join(dir, encodeURIComponent(processor), `${partition}.ckpt`);
}
