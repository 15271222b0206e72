import { describe, expect, it } from 'vitest';
import { IN_MEMORY_TABLES } from './runtime/state/tables.ts';
import { createGroupedDedupeState, createKeyedDedupeState, firstGroupedDelivery, firstKeyedDelivery } from './dedupe.ts';

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

describe('the repeat filter by group', () => {
  it('given a key seen in a group, then its repeat is dropped, and the same key in another group passes', () => {
    const state = createGroupedDedupeState(HOUR, IN_MEMORY_TABLES, 'seen');
    expect(firstGroupedDelivery(state, 'tk_a', '100', 100)).toBe(true);
    expect(firstGroupedDelivery(state, 'tk_b', '100', 100)).toBe(true);
    expect(firstGroupedDelivery(state, 'tk_a', '100', 100)).toBe(false);
    expect(firstGroupedDelivery(state, 'tk_a', '200', 200)).toBe(true);
    expect(state.groups.get('tk_a')).toEqual({ keys: ['100', '200'], times: [100, 200] });
  });

  it('given a record a window after a key, then the group forgets the key and it passes again', () => {
    const state = createGroupedDedupeState(HOUR, IN_MEMORY_TABLES, 'seen');
    firstGroupedDelivery(state, 'au_1', 'p1', 0);
    firstGroupedDelivery(state, 'au_1', 'p2', HOUR);
    expect(firstGroupedDelivery(state, 'au_1', 'p3', HOUR + 1)).toBe(true);
    expect(state.groups.get('au_1')).toEqual({ keys: ['p2', 'p3'], times: [HOUR, HOUR + 1] });
    expect(firstGroupedDelivery(state, 'au_1', 'p1', HOUR + 2)).toBe(true);
  });
});
