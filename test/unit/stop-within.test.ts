import { describe, expect, it } from 'vitest';
import { stopWithin, type StopStep } from '../../cli/stop-within.ts';

/** A step that records that it ran and ends after `ms`, or never (null). */
function step(name: string, ms: number | null, ran: string[]): StopStep {
  return {
    name,
    run: () => {
      ran.push(name);
      return ms === null ? new Promise(() => undefined) : new Promise((resolve) => setTimeout(resolve, ms));
    },
  };
}

describe('a stop within a deadline', () => {
  it('runs every step in order and says nothing is unfinished', async () => {
    const ran: string[] = [];
    expect(await stopWithin([step('feeds', 5, ran), step('api', 0, ran), step('log', 5, ran)], 1_000)).toBeNull();
    expect(ran).toEqual(['feeds', 'api', 'log']);
  });

  it('gives up at the deadline on a step that hangs, naming it, and begins none after it', async () => {
    const ran: string[] = [];
    const from = Date.now();
    expect(await stopWithin([step('feeds', 0, ran), step('processors', null, ran), step('log', 0, ran)], 200)).toBe('processors');
    expect(Date.now() - from).toBeGreaterThanOrEqual(190);
    expect(ran).toEqual(['feeds', 'processors']);
  });

  it('fails with the step that fails', async () => {
    const failing: StopStep = { name: 'store', run: () => Promise.reject(new Error('close failed')) };
    await expect(stopWithin([failing], 1_000)).rejects.toThrow('close failed');
  });
});
