import { describe, expect, it } from 'vitest';
import { stalledSince } from '../../processors/runtime/stalled-input.ts';

describe('stalledSince', () => {
  it('names an input whose records were in the log at the last look and are still unfetched', () => {
    expect(stalledSince({ fetched: 4, queued: 0, end: 5 }, { fetched: 4, queued: 0, end: 5 })).toBe(true);
    expect(stalledSince({ fetched: 4, queued: 0, end: 5 }, { fetched: 4, queued: 0, end: 9 })).toBe(true);
  });

  it('does not name an input whose records were appended since the last look', () => {
    expect(stalledSince({ fetched: 0, queued: 0, end: 0 }, { fetched: 0, queued: 0, end: 1 })).toBe(false);
  });

  it('does not name an input that fetched since the last look, though records are left', () => {
    expect(stalledSince({ fetched: 4, queued: 0, end: 50 }, { fetched: 6, queued: 0, end: 50 })).toBe(false);
  });

  it('does not name an input whose fetched records wait in its queue for another input', () => {
    expect(stalledSince({ fetched: 4, queued: 2, end: 9 }, { fetched: 4, queued: 2, end: 9 })).toBe(false);
  });

  it('does not name an input before its end offsets have been read at two looks', () => {
    expect(stalledSince(undefined, { fetched: 0, queued: 0, end: 5 })).toBe(false);
    expect(stalledSince({ fetched: 0, queued: 0, end: undefined }, { fetched: 0, queued: 0, end: 5 })).toBe(false);
  });
});
