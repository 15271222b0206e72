/** What a task needs to resume exactly where it stopped: its state and the input positions it covers. */
export interface Checkpoint<State> {
  stateVersion: number;
  /** Next offset to process, per input topic (of this task's partition). */
  positions: Record<string, number>;
  /** Largest event time processed, -Infinity before the first record. */
  maxEventTime: number;
  state: State;
}

/**
 * Where a processor's tasks keep their checkpoints, one per processor and task. Saving
 * replaces the task's previous checkpoint; a save cut short by a crash leaves the previous
 * one loadable.
 */
export interface CheckpointStore {
  load<State>(processor: string, task: number): Promise<Checkpoint<State> | undefined>;
  save<State>(processor: string, task: number, checkpoint: Checkpoint<State>): Promise<void>;
}

/** A store that can also keep a checkpoint serialised beforehand (v8 structured serialisation). */
export interface SerializedCheckpointStore extends CheckpointStore {
  saveSerialized(processor: string, task: number, bytes: Buffer): Promise<void>;
}

/**
 * How much input a checkpoint covers. A task processes its inputs in one deterministic merge
 * order, so of two checkpoints of the same task the one covering more input is the later one.
 */
export function inputCovered(checkpoint: Checkpoint<unknown>): number {
  let sum = 0;
  for (const offset of Object.values(checkpoint.positions)) sum += offset;
  return sum;
}
