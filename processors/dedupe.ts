import type { KeyedTable, TableSource } from './runtime/state/tables.ts';

/**
 * Inputs arrive at least once (a collector retries, a simulator resumes after a crash, a
 * processor repeats its outputs after a crash), so a processor drops a record it has
 * already seen: the engine a post by its id or a tick by token and time, the public-events
 * processor a derived record by its id. Keys are remembered for a window of event time; the
 * Map keeps insertion order, which follows event time closely enough to prune from the front.
 */
export interface DedupeState {
  windowMs: number;
  seen: Map<string, number>;
  repeats: number;
}

export function createDedupeState(windowMs: number): DedupeState {
  return { windowMs, seen: new Map(), repeats: 0 };
}

/** True the first time `key` is seen within the window; counts the repeats. */
export function firstDelivery(state: DedupeState, key: string, ts: number): boolean {
  // Pruning walks from the oldest key; once per 256 calls keeps it off the per-record cost.
  if (state.seen.size % 256 === 0) {
    for (const [oldest, at] of state.seen) {
      if (at >= ts - state.windowMs) break;
      state.seen.delete(oldest);
    }
  }
  if (state.seen.has(key)) {
    state.repeats++;
    return false;
  }
  state.seen.set(key, ts);
  return true;
}

const HOUR_MS = 3_600_000;
const HOURS_KEY = 'hours';

/**
 * The same check over a task's tables (runtime/state/tables.ts): the keys first seen in each
 * hour of event time are one entry, so a checkpoint writes the hour that changed and the hours
 * past the window are deleted whole. A repeat carries its record's time, so it falls in the
 * hour its first delivery did.
 */
export interface KeyedDedupeState {
  windowMs: number;
  /** Hour of event time (epoch hours) → the keys first seen in it. */
  keysByHour: KeyedTable<string[]>;
  /** The hours `keysByHour` holds, ascending, under one key. */
  hours: KeyedTable<number[]>;
}

/** `name` prefixes the two tables, so that one state may hold several such checks. */
export function createKeyedDedupeState(windowMs: number, tables: TableSource, name: string): KeyedDedupeState {
  return { windowMs, keysByHour: tables.table(`${name}-keys-by-hour`), hours: tables.table(`${name}-hours`) };
}

/** True the first time `key` is seen within the window. */
export function firstKeyedDelivery(state: KeyedDedupeState, key: string, ts: number): boolean {
  const hour = Math.floor(ts / HOUR_MS);
  const keys = state.keysByHour.get(String(hour));
  if (keys?.includes(key)) return false;
  state.keysByHour.set(String(hour), keys ? [...keys, key] : [key]);
  if (keys) return true;
  // A new hour: the hours that have left the window go, whole.
  const keepFrom = Math.floor((ts - state.windowMs) / HOUR_MS);
  const hours: number[] = [];
  for (const h of state.hours.get(HOURS_KEY) ?? []) {
    if (h >= keepFrom) hours.push(h);
    else state.keysByHour.delete(String(h));
  }
  const at = hours.findIndex((h) => h > hour);
  hours.splice(at === -1 ? hours.length : at, 0, hour);
  state.hours.set(HOURS_KEY, hours);
  return true;
}
