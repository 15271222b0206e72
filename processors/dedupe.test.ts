import { describe, expect, it } from 'vitest';
import { IN_MEMORY_TABLES } from './runtime/state/tables.ts';
import { createKeyedDedupeState, firstKeyedDelivery } from './dedupe.ts';

const HOUR = 3_600_000;

describe('the repeat filter over a task’s tables', () => {
  it('given a key seen in an hour, then a repeat with its time is dropped and other keys pass', () => {
    const state = createKeyedDedupeState(24 * HOUR, IN_MEMORY_TABLES, 'seen');
    expect(firstKeyedDelivery(state, 'a', 10 * HOUR + 5)).toBe(true);
    expect(firstKeyedDelivery(state, 'b', 10 * HOUR + 7)).toBe(true);
    expect(firstKeyedDelivery(state, 'a', 10 * HOUR + 5)).toBe(false);
    expect(firstKeyedDelivery(state, 'b', 10 * HOUR + 7)).toBe(false);
    expect(state.keysByHour.get('10')).toEqual(['a', 'b']);
    expect(state.hours.get('hours')).toEqual([10]);
  });

  it('given hours out of order, then it keeps them ascending', () => {
    const state = createKeyedDedupeState(24 * HOUR, IN_MEMORY_TABLES, 'seen');
    for (const hour of [12, 10, 11, 12]) firstKeyedDelivery(state, `k${hour}`, hour * HOUR);
    expect(state.hours.get('hours')).toEqual([10, 11, 12]);
  });

  it('given a new hour, then the hours that left the window are deleted whole and their keys pass again', () => {
    const state = createKeyedDedupeState(2 * HOUR, IN_MEMORY_TABLES, 'seen');
    firstKeyedDelivery(state, 'old', 1 * HOUR);
    firstKeyedDelivery(state, 'kept', 2 * HOUR);
    firstKeyedDelivery(state, 'new', 4 * HOUR);
    expect(state.hours.get('hours')).toEqual([2, 4]);
    expect(state.keysByHour.has('1')).toBe(false);
    expect(firstKeyedDelivery(state, 'kept', 2 * HOUR)).toBe(false);
    expect(firstKeyedDelivery(state, 'old', 1 * HOUR)).toBe(true);
  });
});
