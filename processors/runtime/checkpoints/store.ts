import { hash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import type { AnalyticalStore } from '../../../infra/store/port.ts';
import { columns, sql, table } from '../../../infra/store/sql-literal.ts';
import { defineTable } from '../../../infra/store/table.ts';
import type { Checkpoint, SerializedCheckpointStore } from './port.ts';

/**
 * Checkpoints kept in the analytical store, so that a processors process on any machine can
 * restore the state of a task it takes over. A checkpoint (v8-serialised, as on file) is cut
 * into parts of base64 text. Each task has two slots: a save writes every part of the slot
 * its last complete save did not use, under a new generation, so a save cut short (a crash,
 * the store going away mid-save) leaves the other slot's checkpoint whole; every part carries
 * the digest of the whole, so parts that do not add up to one checkpoint are never loaded.
 */
export const processorCheckpoints = defineTable({
  name: 'processor_checkpoints',
  columns: {
    processor: 'string',
    task: 'int64',
    slot: 'int64',
    part: 'int64',
    /** Rises with every save of the task; the slot whose parts all carry the highest one complete is loaded. */
    generation: 'int64',
    parts: 'int64',
    /** sha256 of the whole checkpoint, in every part: a load checks the parts add up to it. */
    digest: 'string',
    saved_at: 'int64',
    data: 'string',
  },
  key: ['processor', 'task', 'slot', 'part'],
  version: 'generation',
});

/** Raw bytes per part: a few MB per row and per insert keeps both stores' requests small. */
const PART_BYTES = 3 * 1024 * 1024;
/** Parts per upsert: bounds the request a save builds at once (about 32 MB of text). */
const PARTS_PER_UPSERT = 8;

type PartRow = {
  slot: number;
  part: number;
  parts: number;
  generation: number;
  digest: string;
};

/** Where a task's next save goes: the slot its last complete checkpoint is not in, one generation up. */
interface Placement {
  newestGeneration: number;
  /** The slots whose parts all carry their newest generation and one digest, newest first. */
  complete: SavedCheckpoint[];
}

interface SavedCheckpoint {
  slot: number;
  generation: number;
  digest: string;
}

export class StoreCheckpoints implements SerializedCheckpointStore {
  private readonly placements = new Map<string, Placement>();

  /** `store` serves processor_checkpoints among its tables. */
  constructor(
    private readonly store: AnalyticalStore,
    private readonly partBytes = PART_BYTES,
  ) {}

  async load<State>(processor: string, task: number): Promise<Checkpoint<State> | undefined> {
    const placement = await this.readPlacement(processor, task);
    for (const saved of [...placement.complete]) {
      const rows = await this.store.query<{ data: string }>(
        sql`SELECT ${columns(processorCheckpoints, ['data'])} FROM ${table(processorCheckpoints)}
            WHERE processor = ${processor} AND task = ${task} AND slot = ${saved.slot}
              AND generation = ${saved.generation} ORDER BY part`,
      );
      const bytes = Buffer.concat(rows.map((row) => Buffer.from(row.data, 'base64')));
      // Parts of one generation from two writers (one the group had already dropped) do not
      // add up to either's checkpoint: the digest tells, and the older slot is tried instead.
      if (digestOf(bytes) === saved.digest) return deserialize(bytes) as Checkpoint<State>;
      placement.complete.shift();
    }
    return undefined;
  }

  save<State>(processor: string, task: number, checkpoint: Checkpoint<State>): Promise<void> {
    return this.saveSerialized(processor, task, serialize(checkpoint));
  }

  async saveSerialized(processor: string, task: number, bytes: Buffer): Promise<void> {
    const placement = this.placements.get(placementKey(processor, task)) ?? (await this.readPlacement(processor, task));
    const digest = digestOf(bytes);
    const slot = placement.complete[0]?.slot === 0 ? 1 : 0;
    const generation = placement.newestGeneration + 1;
    // Taken before the first write: a save that fails part way leaves rows of this
    // generation behind, and the next one must outrank them in the same slot.
    placement.newestGeneration = generation;
    const parts = Math.max(1, Math.ceil(bytes.length / this.partBytes));
    const savedAt = Date.now();
    for (let first = 0; first < parts; first += PARTS_PER_UPSERT) {
      const rows = [];
      for (let part = first; part < Math.min(parts, first + PARTS_PER_UPSERT); part++) {
        const data = bytes.subarray(part * this.partBytes, (part + 1) * this.partBytes).toString('base64');
        rows.push({ processor, task, slot, part, generation, parts, digest, saved_at: savedAt, data });
      }
      await this.store.upsert('processor_checkpoints', rows);
    }
    placement.complete = [{ slot, generation, digest }, ...placement.complete.filter((c) => c.slot !== slot)];
  }

  /** Reads which slots hold a complete checkpoint of the task, and remembers it for the saves. */
  private async readPlacement(processor: string, task: number): Promise<Placement> {
    const rows = await this.store.query<PartRow>(
      sql`SELECT ${columns(processorCheckpoints, ['slot', 'part', 'parts', 'generation', 'digest'])} FROM ${table(processorCheckpoints)}
          WHERE processor = ${processor} AND task = ${task}`,
    );
    const placement: Placement = { newestGeneration: 0, complete: [] };
    for (const slot of [0, 1]) {
      const inSlot = rows.filter((r) => r.slot === slot);
      if (inSlot.length === 0) continue;
      const generation = Math.max(...inSlot.map((r) => r.generation));
      placement.newestGeneration = Math.max(placement.newestGeneration, generation);
      const saved = inSlot.filter((r) => r.generation === generation);
      const { parts, digest } = saved[0];
      if (saved.length === parts && saved.every((r) => r.parts === parts && r.digest === digest)) {
        placement.complete.push({ slot, generation, digest });
      }
    }
    placement.complete.sort((a, b) => b.generation - a.generation);
    this.placements.set(placementKey(processor, task), placement);
    return placement;
  }
}

function digestOf(bytes: Buffer): string {
  return hash('sha256', bytes, 'hex');
}

function placementKey(processor: string, task: number): string {
  return `${processor}#${task}`;
}
