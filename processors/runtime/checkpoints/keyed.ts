import { access } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventLog } from '../../../infra/log/port.ts';
import type { Logger } from '../../../infra/logging.ts';
import type { Processor } from '../processor.ts';
import { changelogTopic, TaskChangelog } from '../state/changelog.ts';
import { tableOfKey, TaskStateStore } from '../state/task-store.ts';
import { checkpointFile, FileCheckpoints } from './files.ts';
import type { Checkpoint, CheckpointStore } from './port.ts';

/**
 * Checkpoints of a processor whose state is keyed (Processor.keyedState): each task's tables
 * live in a store file of its own, `<dir>/<processor>/<task>.lmdb`, and a checkpoint commits
 * only the keys changed since the last one, with the positions they cover. Loading a task
 * takes it (TaskStateStore.take): whatever it changed since its last commit is dropped, so a
 * task that failed resumes from there, and a process that held it before is fenced out.
 * Given the event log (Kafka), every checkpoint also goes to the processor's changelog
 * (state/changelog.ts), from which a process that takes a task brings its store up to date.
 */
export class KeyedCheckpoints implements CheckpointStore {
  private readonly stores = new Map<number, TaskStateStore>();
  private readonly changelogs = new Map<number, TaskChangelog>();

  constructor(
    private readonly dir: string,
    private readonly processor: Processor<unknown>,
    private readonly logger?: Logger,
    private readonly changelogLog?: EventLog,
  ) {}

  /** Always a checkpoint: before the first commit, one of no input over the store's empty tables. */
  async load<State>(_processor: string, task: number): Promise<Checkpoint<State>> {
    const store = await this.storeOf(task);
    store.take();
    if (this.changelogLog) {
      const changelog = new TaskChangelog(this.changelogLog, changelogTopic(this.processor), task);
      const started = performance.now();
      const { restoredRecords } = await changelog.take(store);
      this.changelogs.set(task, changelog);
      this.logger?.info({ processor: this.processor.name, task, restoredRecords, ms: Math.round(performance.now() - started) }, 'task state brought up to date from its changelog');
    }
    const at = store.position();
    return {
      stateVersion: this.processor.stateVersion,
      positions: at?.positions ?? {},
      maxEventTime: at?.maxEventTime ?? -Infinity,
      state: this.processor.createState(task, store) as State,
    };
  }

  async save<State>(_processor: string, task: number, checkpoint: Checkpoint<State>): Promise<void> {
    const started = performance.now();
    const store = await this.storeOf(task);
    const position = { positions: checkpoint.positions, maxEventTime: checkpoint.maxEventTime };
    const changelog = this.changelogs.get(task);
    const changes = store.changes();
    let keysWritten: number;
    if (changelog) {
      store.assertHeld(); // a holder fenced out here writes nothing more to the changelog either
      const at = await changelog.append(changes, position, (key) => store.committedBytes(key));
      keysWritten = store.commit(position, changes, at).keysWritten;
    } else keysWritten = store.commit(position, changes).keysWritten;
    if (!this.logger?.isLevelEnabled('debug')) return;
    const ms = performance.now() - started;
    const bytesByTable: Record<string, number> = {};
    for (const { key, bytes } of changes) {
      const table = tableOfKey(key)!;
      bytesByTable[table] = (bytesByTable[table] ?? 0) + (bytes?.length ?? 0);
    }
    const bytesWritten = Object.values(bytesByTable).reduce((sum, bytes) => sum + bytes, 0);
    this.logger.debug({ processor: this.processor.name, task, keysWritten, bytesWritten, bytesByTable, ms }, 'checkpoint committed');
  }

  private async storeOf(task: number): Promise<TaskStateStore> {
    let store = this.stores.get(task);
    if (!store) {
      const file = join(this.dir, encodeURIComponent(this.processor.name), `${task}.lmdb`);
      const opened = await TaskStateStore.open(file, this.processor.stateVersion);
      if (opened.reset) this.logger?.info({ processor: this.processor.name, task, file }, 'the store file was of another state version or an earlier format: emptied, the task rebuilds its state from offset 0');
      // A processor whose state was saved whole before it was keyed leaves that file beside the new store.
      const wholeState = checkpointFile(this.dir, this.processor.name, task);
      if (opened.store.position() === undefined && (await access(wholeState).then(() => true, () => false))) {
        this.logger?.info({ processor: this.processor.name, task, file: wholeState }, 'the task kept its state whole before this version and now keeps it per key: it rebuilds its state from offset 0');
      }
      this.stores.set(task, (store = opened.store));
    }
    return store;
  }
}

/**
 * The checkpoints a processor keeps in the data dir: a store per task when its state is keyed
 * (with its changelog in `changelogLog`, when given), one file per task otherwise.
 */
export function localCheckpoints(dir: string, processor: Processor<unknown>, logger?: Logger, changelogLog?: EventLog): CheckpointStore {
  return processor.keyedState ? new KeyedCheckpoints(dir, processor, logger, changelogLog) : new FileCheckpoints(dir);
}
