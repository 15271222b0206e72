import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../../infra/logging.ts';
import { inputCovered, type Checkpoint, type CheckpointStore } from './port.ts';

/** Back-off between tries to read the shared checkpoint while the store does not answer. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;

/**
 * Checkpoints shared through a store every processors process reaches (the distributed
 * mode), with this machine's files as a cache in front of them. A save goes to the files,
 * then to the shared store; while the store is down the files go on and the shared copy
 * catches up at the next save that reaches it, so a store outage neither stops a task nor
 * loses what it saved here. A load takes whichever copy covers more input: the shared one
 * after another process worked on the task, this machine's after saves the store missed.
 */
export class CachedCheckpoints implements CheckpointStore {
  constructor(
    private readonly local: CheckpointStore,
    private readonly shared: () => Promise<CheckpointStore>,
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
    await this.local.save(processor, task, checkpoint);
    try {
      await (await this.shared()).save(processor, task, checkpoint);
    } catch (err) {
      this.logger.warn({ err, processor, task }, 'saving the checkpoint to the store failed; it is saved on this machine, and the next save tries the store again');
    }
  }

  /**
   * The shared copy. Without a local one to fall back on, waits for the store: starting from
   * nothing would replay every input although a checkpoint may be there once the store answers.
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
