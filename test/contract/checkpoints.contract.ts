import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../infra/store/errors.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { Dialect } from '../../infra/store/sql-literal.ts';
import type { Checkpoint } from '../../processors/runtime/checkpoints/port.ts';
import { StoreCheckpoints } from '../../processors/runtime/checkpoints/store.ts';
import { STORE_TABLES } from '../../projections/tables.ts';
import type { StoreFactory } from './store.contract.ts';

/** Bytes per part in these tests: a checkpoint of a few KB spans more parts than one upsert takes. */
const PART_BYTES = 256;

interface TestState {
  counts: Map<string, number>;
  prices: Float64Array;
  note: string;
}

function checkpointAt(offset: number, size = 40): Checkpoint<TestState> {
  return {
    stateVersion: 3,
    positions: { 'ingest.posts#0': offset, 'ingest.market#1': offset * 2 },
    maxEventTime: 1_700_000_000_000 + offset,
    state: {
      counts: new Map(Array.from({ length: size }, (_, i) => [`tk_${i}`, offset + i])),
      prices: Float64Array.from({ length: size }, (_, i) => offset / (i + 1)),
      note: `after ${offset}`,
    },
  };
}

/** The store, except that its upserts fail from the `failFrom`-th one on (a process dying mid-save). */
function failingAfter(store: AnalyticalStore<typeof STORE_TABLES>, failFrom: number): AnalyticalStore {
  let upserts = 0;
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'upsert') return Reflect.get(target, prop, receiver) as unknown;
      return async (...args: Parameters<typeof store.upsert>) => {
        if (++upserts >= failFrom) throw new StoreError('STORE_UNAVAILABLE', 'the store went away mid-save');
        return target.upsert(...args);
      };
    },
  });
}

/** Processor checkpoints kept in an analytical store (processors/runtime/checkpoints/store.ts), on every adapter. */
export function describeCheckpointContract(name: Dialect, factory: StoreFactory): void {
  describe(`StoreCheckpoints on ${name}`, () => {
    let store: AnalyticalStore<typeof STORE_TABLES>;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      const sut = await factory(STORE_TABLES);
      store = sut.store;
      cleanup = () => sut.cleanup();
      await store.migrate();
    });

    afterEach(async () => {
      await cleanup();
    });

    it('has nothing for a task never saved', async () => {
      expect(await new StoreCheckpoints(store, PART_BYTES).load('quant-engine', 0)).toBeUndefined();
    });

    it('gives back the state saved, across parts and upserts, to another process and per task', async () => {
      const saved = checkpointAt(1000);
      await new StoreCheckpoints(store, PART_BYTES).save('quant-engine', 0, saved);
      await new StoreCheckpoints(store, PART_BYTES).save('quant-engine', 1, checkpointAt(5));

      const restored = await new StoreCheckpoints(store, PART_BYTES).load<TestState>('quant-engine', 0);
      expect(restored).toEqual(saved);
      expect(restored?.state.prices).toBeInstanceOf(Float64Array);
      expect((await new StoreCheckpoints(store, PART_BYTES).load<TestState>('quant-engine', 1))?.state.note).toBe('after 5');
      expect(await new StoreCheckpoints(store, PART_BYTES).load('public-events', 0)).toBeUndefined();
    });

    it('loads the latest of many saves, also when a later one has fewer parts', async () => {
      const checkpoints = new StoreCheckpoints(store, PART_BYTES);
      await checkpoints.save('quant-engine', 0, checkpointAt(1, 200));
      await checkpoints.save('quant-engine', 0, checkpointAt(2, 200));
      await checkpoints.save('quant-engine', 0, checkpointAt(3, 4));
      expect(await new StoreCheckpoints(store, PART_BYTES).load('quant-engine', 0)).toEqual(checkpointAt(3, 4));
    });

    it('keeps the previous checkpoint whole when a save is cut short, and saves on after it', async () => {
      await new StoreCheckpoints(store, PART_BYTES).save('quant-engine', 0, checkpointAt(10, 200));
      // A process that loaded it dies after its first upsert of the next save.
      const dying = new StoreCheckpoints(failingAfter(store, 2), PART_BYTES);
      expect(await dying.load('quant-engine', 0)).toEqual(checkpointAt(10, 200));
      await expect(dying.save('quant-engine', 0, checkpointAt(20, 200))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(await new StoreCheckpoints(store, PART_BYTES).load('quant-engine', 0)).toEqual(checkpointAt(10, 200));

      // The process that takes over saves over the parts the failed save left.
      const recovered = new StoreCheckpoints(store, PART_BYTES);
      await recovered.load('quant-engine', 0);
      await recovered.save('quant-engine', 0, checkpointAt(30, 100));
      expect(await new StoreCheckpoints(store, PART_BYTES).load('quant-engine', 0)).toEqual(checkpointAt(30, 100));
    });

    it('never loads parts of two writers as one checkpoint (a process the group dropped still saving)', async () => {
      await new StoreCheckpoints(store, PART_BYTES).save('quant-engine', 0, checkpointAt(10, 200));
      const successor = new StoreCheckpoints(store, PART_BYTES);
      const dropped = new StoreCheckpoints(failingAfter(store, 2), PART_BYTES);
      await successor.load('quant-engine', 0);
      await dropped.load('quant-engine', 0);
      await successor.save('quant-engine', 0, checkpointAt(20, 200));
      // The same slot and generation: its first parts replace the successor's, then it dies.
      await expect(dropped.save('quant-engine', 0, checkpointAt(15, 200))).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(await new StoreCheckpoints(store, PART_BYTES).load('quant-engine', 0)).toEqual(checkpointAt(10, 200));
    });

    it('hands a task between processes: each resumes from the other one last save', async () => {
      const first = new StoreCheckpoints(store, PART_BYTES);
      const second = new StoreCheckpoints(store, PART_BYTES);
      await first.save('quant-engine', 0, checkpointAt(1));
      expect(await second.load('quant-engine', 0)).toEqual(checkpointAt(1));
      await second.save('quant-engine', 0, checkpointAt(2));
      await second.save('quant-engine', 0, checkpointAt(3));
      expect(await first.load('quant-engine', 0)).toEqual(checkpointAt(3));
      await first.save('quant-engine', 0, checkpointAt(4));
      expect(await second.load('quant-engine', 0)).toEqual(checkpointAt(4));
    });
  });
}
