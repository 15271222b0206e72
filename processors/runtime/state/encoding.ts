import { Packr } from 'msgpackr';

/**
 * How a task's state values are written, in its store file and in its changelog alike: the
 * same bytes in both, so that a store restored from the changelog holds what the task wrote.
 * msgpack without shared record structures, which would tie a value to the file it was
 * written in; typed arrays (the outcomes' deques) are kept as such, not as plain bytes.
 */
const packr = new Packr({ useRecords: false, moreTypes: true });

export function encodeStateValue(value: unknown): Buffer {
  return packr.pack(value);
}

export function decodeStateValue(bytes: Buffer): unknown {
  return packr.unpack(bytes);
}
