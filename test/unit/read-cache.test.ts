import { describe, expect, it } from 'vitest';
import { ReadCache } from '../../api/services/read-cache.ts';

describe('ReadCache', () => {
  it('shares one load between identical reads in flight and within the TTL, then loads again', async () => {
    let now = 0;
    let loads = 0;
    const cache = new ReadCache<number>({ now: () => now, ttlMs: 1000 });
    const load = async () => ++loads;
    expect(await Promise.all([cache.get('a', load), cache.get('a', load)])).toEqual([1, 1]);
    now = 999;
    expect(await cache.get('a', load)).toBe(1);
    expect(await cache.get('b', load)).toBe(2);
    now = 1000;
    expect(await cache.get('a', load)).toBe(3);
  });

  it('keeps no failed load', async () => {
    const cache = new ReadCache<string>({ now: () => 0 });
    await expect(cache.get('a', () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    expect(await cache.get('a', async () => 'answer')).toBe('answer');
  });
});
