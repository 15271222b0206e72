import { setTimeout as sleep } from 'node:timers/promises';
import { serialize } from 'node:v8';
import type { Logger } from '../../../infra/logging.ts';
import { inputCovered, type Checkpoint, type CheckpointStore, type SerializedCheckpointStore } from './port.ts';

/** Back-off between tries to read the shared checkpoint while the store does not answer. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

/**
 * Checkpoints shared through a store every processors process reaches (the distributed
 * mode), with this machine's files as a cache in front of them. A save is done once the file
 * is written; the copy to the shared store follows in the background, one at a time per task,
 * a newer save replacing one still waiting. So the store's speed never holds a task back (nor
 * spaces its checkpoints, which the runtime times by how long a save takes), and while the
 * store is down the files go on and the shared copy catches up at the next save that reaches
 * it. A load takes whichever copy covers more input: the shared one after another process
 * worked on the task, this machine's after saves the store missed or had not received yet.
 */
export class CachedCheckpoints implements CheckpointStore {
  /** Per task: the copy to the store in progress, and the newest save waiting for it. */
  private readonly copies = new Map<string, { running: Promise<void>; waiting: Buffer | undefined }>();

  /**
   * `everSaved` tells whether the processor's group has ever committed (it commits what a
   * saved checkpoint covers): whether a checkpoint may be waiting in the store.
   */
  constructor(
    private readonly local: SerializedCheckpointStore,
    private readonly shared: () => Promise<SerializedCheckpointStore>,
    private readonly everSaved: (processor: string) => Promise<boolean>,
    private readonly logger: Logger,
  ) {}

  async load<State>(processor: string, task: number): Promise<Checkpoint<State> | undefined> {
    const local = await this.local.load<State>(processor, task);
    const shared = await this.loadShared<State>(processor, task, local !== undefined);
    const chosen = shared === 'unavailable' ? local : newer(local, shared);
    const source = chosen === undefined ? 'none' : chosen === local ? 'local' : 'store';
    this.logger.info({ processor, task, source, inputCovered: chosen ? inputCovered(chosen) : 0 }, 'checkpoint loaded');
    return chosen;
  }

  async save<State>(processor: string, task: number, checkpoint: Checkpoint<State>): Promise<void> {
    // Serialised now: the task goes on changing its state once this returns.
    const bytes = serialize(checkpoint);
    await this.local.saveSerialized(processor, task, bytes);
    this.copyToStore(processor, task, bytes);
  }

  /** Resolves once every save made so far has been copied to the store, or failed to be. */
  async flush(): Promise<void> {
    while (this.copies.size > 0) await Promise.all([...this.copies.values()].map((c) => c.running));
  }

  private copyToStore(processor: string, task: number, bytes: Buffer): void {
    const key = `${processor}#${task}`;
    const inProgress = this.copies.get(key);
    if (inProgress) {
      inProgress.waiting = bytes;
      return;
    }
    const copy = { running: Promise.resolve(), waiting: bytes as Buffer | undefined };
    copy.running = (async () => {
      for (let next = copy.waiting; next !== undefined; next = copy.waiting) {
        copy.waiting = undefined;
        try {
          await (await this.shared()).saveSerialized(processor, task, next);
        } catch (err) {
          this.logger.warn({ err, processor, task }, 'copying the checkpoint to the store failed; it is saved on this machine, and the next save tries the store again');
        }
      }
      this.copies.delete(key);
    })();
    this.copies.set(key, copy);
  }

  /**
   * The shared copy. Without a local one to fall back on, waits for the store if the group
   * ever committed: starting from nothing would replay every input although a checkpoint is
   * there once the store answers. A group that never committed has none: it starts at once.
   */
  private async loadShared<State>(processor: string, task: number, hasLocal: boolean): Promise<Checkpoint<State> | undefined | 'unavailable'> {
    for (let waitMs = RETRY_FIRST_MS; ; waitMs = Math.min(RETRY_MAX_MS, waitMs * 2)) {
      try {
        return await (await this.shared()).load<State>(processor, task);
      } catch (err) {
        if (hasLocal) {
          this.logger.warn({ err, processor, task }, 'reading the checkpoint from the store failed; resuming from the one on this machine');
          return 'unavailable';
        }
        if (!(await this.everSaved(processor).catch(() => true))) {
          this.logger.warn({ err, processor, task }, 'reading the checkpoint from the store failed, and the group never committed: starting from the beginning');
          return 'unavailable';
        }
        this.logger.warn({ err, processor, task, retryInMs: waitMs }, 'reading the checkpoint from the store failed; trying again');
        await sleep(waitMs);
      }
    }
  }
}

/** The checkpoint of the newer state layout, then the one covering more input; ties go to the local copy. */
function newer<State>(local: Checkpoint<State> | undefined, shared: Checkpoint<State> | undefined): Checkpoint<State> | undefined {
  if (!local || !shared) return local ?? shared;
  if (local.stateVersion !== shared.stateVersion) return local.stateVersion > shared.stateVersion ? local : shared;
  return inputCovered(shared) > inputCovered(local) ? shared : local;
}
