import type { OutcomeResolution } from '../quant-engine/contracts.ts';
import {
  candidateColumns,
  createAnalogsState,
  onResolution,
  onSnapshot,
  pendingSnapshot,
  poolPosition,
  restoreAnalogsState,
  type AnalogCandidateColumns,
  type AnalogsState,
  type PendingSnapshot,
  type PoolPosition,
  type SnapshotRef,
} from '../quant-engine/analogs/analogs.ts';
import { ANALOG_DIMS as D, type AnalogInputs } from '../quant-engine/analogs/vector.ts';
import type { KeyedTable, TableSource } from '../runtime/state/tables.ts';

/**
 * The analog pool of the analogs stage, kept in its task's tables: the candidates in blocks
 * of CANDIDATE_BLOCK as columns (a block changes only while it fills, so a checkpoint writes
 * the last one, whatever the pool's size), the snapshots waiting for their 24 h outcome by
 * sequence number, and where the pool stands under one key. The pool itself, with its index,
 * is built from them when the task starts (the index over the candidates it held at its last
 * rebuild, so it answers as the pool did) and then kept in memory beside them.
 */
export interface StoredPool {
  /** Block number → its candidates. */
  blocks: KeyedTable<AnalogCandidateColumns>;
  /** Sequence number → a snapshot waiting for its 24 h outcome. */
  pending: KeyedTable<Omit<PendingSnapshot, 'seq'>>;
  position: KeyedTable<PoolPosition>;
}

const CANDIDATE_BLOCK = 64;
const POSITION_KEY = 'pool';

export function createStoredPool(tables: TableSource): StoredPool {
  return {
    // Written as they fill and read back only when the task starts: nothing to keep cached.
    blocks: tables.table('pool-blocks', { cacheEntries: 0 }),
    pending: tables.table('pool-pending'),
    position: tables.table('pool-position'),
  };
}

/** The pools built from their tables, by the tables they follow: derived, never checkpointed. */
const pools = new WeakMap<StoredPool, AnalogsState>();

/** The pool, built from its tables on first use. */
export function poolOf(stored: StoredPool): AnalogsState {
  let pool = pools.get(stored);
  if (!pool) pools.set(stored, (pool = restore(stored)));
  return pool;
}

function restore(stored: StoredPool): AnalogsState {
  const position = stored.position.get(POSITION_KEY);
  if (!position) return createAnalogsState();
  const blocks = [...stored.blocks.entries()].sort(([a], [b]) => Number(a) - Number(b)).map(([, block]) => block);
  const columns = concat(blocks);
  if (columns.count !== position.candidates) {
    throw new Error(
      `the analog pool's tables hold ${columns.count} candidates where its position says ${position.candidates}: ` +
        'its state store is inconsistent; delete <TQA_DATA_DIR>/state/analogs/ (on Kafka, its changelog topic too) and the stage rebuilds its state from offset 0',
    );
  }
  const pending = [...stored.pending.entries()].map(([seq, snapshot]) => ({ seq: Number(seq), ...snapshot }));
  return restoreAnalogsState(columns, position, pending);
}

function concat(blocks: AnalogCandidateColumns[]): AnalogCandidateColumns {
  let count = 0;
  for (const block of blocks) count += block.count;
  const out: AnalogCandidateColumns = {
    count,
    snapshotId: blocks.flatMap((b) => b.snapshotId),
    tokenId: blocks.flatMap((b) => b.tokenId),
    ts: new Float64Array(count),
    resolvedAt: new Float64Array(count),
    return24h: new Float64Array(count),
    maxDrawdown24h: new Float64Array(count),
    raw: new Float64Array(count * D),
  };
  let at = 0;
  for (const block of blocks) {
    out.ts.set(block.ts, at);
    out.resolvedAt.set(block.resolvedAt, at);
    out.return24h.set(block.return24h, at);
    out.maxDrawdown24h.set(block.maxDrawdown24h, at);
    out.raw.set(block.raw, at * D);
    at += block.count;
  }
  return out;
}

/** Takes a snapshot's vector in (analogs.ts onSnapshot), keeping it in the tables while it waits. */
export function takeSnapshot(stored: StoredPool, snapshot: SnapshotRef, inputs: AnalogInputs): void {
  const pool = poolOf(stored);
  const before = poolPosition(pool);
  onSnapshot(pool, snapshot, inputs);
  const after = poolPosition(pool);
  if (after.pendingNext === before.pendingNext) return; // already waiting
  const { seq: _, ...waiting } = pendingSnapshot(pool, before.pendingNext);
  stored.pending.set(String(before.pendingNext), waiting);
  stored.position.set(POSITION_KEY, after);
}

/** Hands an outcome to the pool (analogs.ts onResolution), keeping what it changed in the tables. */
export function takeResolution(stored: StoredPool, resolution: OutcomeResolution): void {
  if (resolution.subject.kind !== 'snapshot' || resolution.horizon !== '24h') return; // the pool takes no other
  const pool = poolOf(stored);
  const before = poolPosition(pool);
  // The snapshot resolved, and those passed over with no outcome coming, leave the pool's pending ones.
  for (const seq of onResolution(pool, resolution)) stored.pending.delete(String(seq));
  const after = poolPosition(pool);
  if (after.candidates > before.candidates) {
    const block = Math.floor((after.candidates - 1) / CANDIDATE_BLOCK);
    stored.blocks.set(String(block), candidateColumns(pool, block * CANDIDATE_BLOCK, after.candidates));
  }
  stored.position.set(POSITION_KEY, after);
}
