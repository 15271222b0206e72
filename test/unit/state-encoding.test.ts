import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeStateValue, encodeStateValue } from '../../processors/runtime/state/encoding.ts';

/** The encoding of state values (processors/runtime/state/encoding.ts), in store files and changelogs alike. */
describe('state values', () => {
  const entries = Array.from({ length: 200 }, (_, i) => ({ ts: 1_700_000_000_000 + i * 60_000, authorId: `au_${i % 7}`, engagement: i, latest: i % 3 === 0 }));
  const value = { entries, at: -Infinity, counts: new Uint32Array([1, 2, 3]), seen: new Set(['a']), byAuthor: { 'a:au_1': 5 }, last: null };

  it('given objects of one shape, then their keys are written once and the value reads back equal, by a decoder that saw nothing before', () => {
    const bytes = encodeStateValue(value);
    const withoutRecords = new Packr({ useRecords: false, moreTypes: true }).pack(value);
    expect(bytes.length).toBeLessThan(withoutRecords.length * 0.7);
    expect(new Packr({ useRecords: true, moreTypes: true, mapsAsObjects: true }).unpack(bytes)).toEqual(value);
    expect(decodeStateValue(bytes)).toEqual(value);
  });

  it('given a value written without records, as stores and changelogs hold from before, then it reads the same', () => {
    expect(decodeStateValue(new Packr({ useRecords: false, moreTypes: true }).pack(value))).toEqual(value);
  });
});
