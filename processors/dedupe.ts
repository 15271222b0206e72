import type { KeyedTable, TableSource } from './runtime/state/tables.ts';

/**
 * Inputs arrive at least once (a collector retries, a simulator resumes after a crash, a
 * processor repeats its outputs after a crash), so a processor drops a record it has
 * already seen: the engine a post by its id or a tick by token and time, the analogs and
 * public-events stages a derived record by its id. Keys are remembered for a window of event
 * time, in a task's tables (runtime/state/tables.ts), so a checkpoint writes only what changed.
 */

/**
 * Keys remembered per group (a tick's token, a post's author): a group's keys are one value,
 * its recent keys in arrival order, so a record costs a read and a write of its group and a
 * checkpoint writes the groups that had records. Suits records whose groups each see a
 * bounded number within the window (a token's ticks in an hour, an author's posts in two days).
 */
export interface GroupedDedupeState {
  windowMs: number;
  /** Group → its keys first seen within the window, and their times, in arrival order. */
  groups: KeyedTable<{ keys: string[]; times: number[] }>;
}

export function createGroupedDedupeState(windowMs: number, tables: TableSource, name: string): GroupedDedupeState {
  return { windowMs, groups: tables.table(name) };
}

/** True the first time `key` is seen in `group` within the window. */
export function firstGroupedDelivery(state: GroupedDedupeState, group: string, key: string, ts: number): boolean {
  const seen = state.groups.get(group) ?? { keys: [], times: [] };
  // Arrival order follows event time closely enough to forget from the front.
  let expired = 0;
  while (expired < seen.times.length && seen.times[expired] < ts - state.windowMs) expired++;
  if (expired > 0) {
    seen.keys.splice(0, expired);
    seen.times.splice(0, expired);
  }
  if (seen.keys.includes(key)) {
    if (expired > 0) state.groups.set(group, seen);
    return false;
  }
  seen.keys.push(key);
  seen.times.push(ts);
  state.groups.set(group, seen);
  return true;
}

const HOUR_MS = 3_600_000;
const HOURS_KEY = 'hours';

/**
 * Keys by the hour of event time they were first seen in, for records with no natural group:
 * the keys first seen in each hour are one entry, so a checkpoint writes the hour that changed and the hours
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
