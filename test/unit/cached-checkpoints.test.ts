import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { StoreError } from '../../infra/store/errors.ts';
import { CachedCheckpoints } from '../../processors/runtime/checkpoints/cached.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import type { Checkpoint } from '../../processors/runtime/checkpoints/port.ts';
import { StoreCheckpoints } from '../../processors/runtime/checkpoints/store.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { STORE_TABLES } from '../../projections/tables.ts';

const logger = pino({ level: 'silent' });

function checkpointAt(offset: number, stateVersion = 1): Checkpoint<{ seen: number }> {
  return { stateVersion, positions: { 'ingest.posts#0': offset, 'ingest.market#0': offset }, maxEventTime: offset, state: { seen: offset } };
}

describe('CachedCheckpoints: this machine’s files in front of the shared store', () => {
  let dir: string;
  let store: DuckDbStore<typeof STORE_TABLES>;
  /** Whether the shared store answers; a machine's processors see it go and come back. */
  let storeUp: boolean;
  /** Whether the processor's group has committed: a checkpoint was saved somewhere. */
  let groupCommitted: boolean;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-cached-checkpoints-'));
    store = await DuckDbStore.open({ path: ':memory:', tables: STORE_TABLES, migrationsDir: migrationsDir('duckdb'), logger });
    await store.migrate();
    storeUp = true;
    groupCommitted = true;
  });

  afterEach(async () => {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The checkpoints of a processors process on `machine` (its own data dir). */
  function machine(name: string): CachedCheckpoints {
    const shared = new StoreCheckpoints(store);
    return new CachedCheckpoints(
      new FileCheckpoints(join(dir, name)),
      async () => {
        if (!storeUp) throw new StoreError('STORE_UNAVAILABLE', 'connect ECONNREFUSED');
        return shared;
      },
      async () => groupCommitted,
      logger,
    );
  }

  /** Saves on `on` and waits for the copy to the store, as a process that stops does. */
  async function saved(on: CachedCheckpoints, offset: number, stateVersion?: number): Promise<void> {
    await on.save('quant-engine', 0, checkpointAt(offset, stateVersion));
    await on.flush();
  }

  it('restores on another machine what one machine saved', async () => {
    await saved(machine('a'), 100);
    expect(await machine('b').load('quant-engine', 0)).toEqual(checkpointAt(100));
  });

  it('copies to the store the state as it was saved, though the task changes it right after', async () => {
    const a = machine('a');
    const checkpoint = checkpointAt(100);
    await a.save('quant-engine', 0, checkpoint);
    checkpoint.state.seen = 999; // the task goes on while the copy is in progress
    checkpoint.positions['ingest.posts#0'] = 999;
    await a.flush();
    expect(await machine('b').load('quant-engine', 0)).toEqual(checkpointAt(100));
  });

  it('copies the newest of the saves made while a copy is in progress', async () => {
    const a = machine('a');
    for (const offset of [1, 2, 3, 4]) await a.save('quant-engine', 0, checkpointAt(offset));
    await a.flush();
    expect(await machine('b').load('quant-engine', 0)).toEqual(checkpointAt(4));
  });

  it('resumes from the later of the two copies: the store after another machine worked on, the files after the store missed saves', async () => {
    await saved(machine('a'), 100);
    const b = machine('b');
    await b.load('quant-engine', 0);
    await saved(b, 250);
    expect(await machine('a').load('quant-engine', 0)).toEqual(checkpointAt(250));

    storeUp = false;
    await saved(b, 300); // the store is down: kept on b only, no failure
    storeUp = true;
    expect(await machine('b').load('quant-engine', 0)).toEqual(checkpointAt(300));
    expect(await machine('a').load('quant-engine', 0)).toEqual(checkpointAt(250));
  });

  it('prefers the newer state layout whatever the input covered', async () => {
    await saved(machine('a'), 900, 1);
    await saved(machine('b'), 10, 2);
    expect(await machine('a').load('quant-engine', 0)).toEqual(checkpointAt(10, 2));
  });

  it('resumes from its own files while the store is down', async () => {
    await saved(machine('a'), 100);
    storeUp = false;
    expect(await machine('a').load('quant-engine', 0)).toEqual(checkpointAt(100));
  });

  it('with nothing on this machine and the store down, starts from nothing at once if the group never committed', async () => {
    storeUp = false;
    groupCommitted = false;
    expect(await machine('b').load('quant-engine', 0)).toBeUndefined();
  });

  it('with nothing on this machine, waits for the store rather than starting over once the group has committed', async () => {
    await saved(machine('a'), 100);
    storeUp = false;
    const loading = machine('b').load('quant-engine', 0);
    let settled = false;
    void loading.finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    storeUp = true;
    expect(await loading).toEqual(checkpointAt(100));
  });
});
