import { join } from 'node:path';
import type { Logger } from '../../../infra/logging.ts';
import type { Processor } from '../processor.ts';
import { TaskStateStore } from '../state/task-store.ts';
import { FileCheckpoints } from './files.ts';
import type { Checkpoint, CheckpointStore } from './port.ts';

/**
 * Checkpoints of a processor whose state is keyed (Processor.keyedState): each task's tables
 * live in a store file of its own, `<dir>/<processor>/<task>.lmdb`, and a checkpoint commits
 * only the keys changed since the last one, with the positions they cover. Loading a task
 * drops whatever it changed since its last commit, so a task that failed resumes from there.
 */
export class KeyedCheckpoints implements CheckpointStore {
  private readonly stores = new Map<number, TaskStateStore>();

  constructor(
    private readonly dir: string,
    private readonly processor: Processor<unknown>,
    private readonly logger?: Logger,
  ) {}

  /** Always a checkpoint: before the first commit, one of no input over the store's empty tables. */
  async load<State>(_processor: string, task: number): Promise<Checkpoint<State>> {
    const store = await this.storeOf(task);
    store.discard();
    const at = store.position();
    return {
      stateVersion: this.processor.stateVersion,
      positions: at?.positions ?? {},
      maxEventTime: at?.maxEventTime ?? -Infinity,
      state: this.processor.createState(task, store) as State,
    };
  }

  async save<State>(_processor: string, task: number, checkpoint: Checkpoint<State>): Promise<void> {
    const { keysWritten } = (await this.storeOf(task)).commit({ positions: checkpoint.positions, maxEventTime: checkpoint.maxEventTime });
    this.logger?.debug({ processor: this.processor.name, task, keysWritten }, 'checkpoint committed');
  }

  private async storeOf(task: number): Promise<TaskStateStore> {
    let store = this.stores.get(task);
    if (!store) {
      const file = join(this.dir, encodeURIComponent(this.processor.name), `${task}.lmdb`);
      const opened = await TaskStateStore.open(file, this.processor.stateVersion);
      if (opened.reset) this.logger?.info({ processor: this.processor.name, task, file }, 'state version changed: the task rebuilds its state from offset 0');
      this.stores.set(task, (store = opened.store));
    }
    return store;
  }
}

/** The checkpoints a processor keeps in the data dir: a store per task when its state is keyed, one file per task otherwise. */
export function localCheckpoints(dir: string, processor: Processor<unknown>, logger?: Logger): CheckpointStore {
  return processor.keyedState ? new KeyedCheckpoints(dir, processor, logger) : new FileCheckpoints(dir);
}
