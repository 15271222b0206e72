import { Packr } from 'msgpackr';

/**
 * How a task's state values are written, in its store file and in its changelog alike: the
 * same bytes in both, so that a store restored from the changelog holds what the task wrote.
 * msgpack with records: the keys of objects of one shape are written once per value (a token's
 * window entries, an author's calls), their definitions inside the value, so a value stands
 * alone, tied to no shared structures of a file. Values written without records (before)
 * read the same. Typed arrays (the analogs' columns) are kept as such, not as plain bytes;
 * maps read as objects, as state values hold no Map.
 */
const packr = new Packr({ useRecords: true, moreTypes: true, mapsAsObjects: true });

export function encodeStateValue(value: unknown): Buffer {
  return packr.pack(value);
}

export function decodeStateValue(bytes: Buffer): unknown {
  return packr.unpack(bytes);
}
