import { Packr } from 'msgpackr';

/**
 * How a task's state values are written, in its store file and in its changelog alike: the
 * same bytes in both, so that a store restored from the changelog holds what the task wrote.
 * msgpack without shared record structures, which would tie a value to the file it was
 * written in.
 */
const packr = new Packr({ useRecords: false });

export function encodeStateValue(value: unknown): Buffer {
  return packr.pack(value);
}

export function decodeStateValue(bytes: Buffer): unknown {
  return packr.unpack(bytes);
}
