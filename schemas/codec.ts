import avro from 'avsc';
import type { SchemaRegistryClient } from './registry-port.ts';
import { currentSchema } from './avro-schemas.ts';
import { catalogueTopic } from './catalogue.ts';
import type { RecordTypeName } from './records.ts';

const MAGIC_BYTE = 0;
const HEADER_BYTES = 5;

export class DecodeError extends Error {}

/**
 * Encodes and decodes record values in the Confluent wire format (magic byte 0, 4-byte
 * big-endian schema id, Avro body), the same in both modes. Values are written with the
 * current schema of the topic's record type and read into it, resolving older writer
 * schemas through the registry.
 */
export class Codec {
  private readonly writers = new Map<string, { id: number; type: avro.Type }>();
  private readonly readerTypes = new Map<RecordTypeName, avro.Type>();
  /** The last value encoded, its schema id and bytes (see encode()). */
  private last: { value: unknown; id: number; bytes: Buffer } = { value: undefined, id: -1, bytes: Buffer.alloc(0) };
  private readonly resolvers = new Map<string, Promise<{ reader: avro.Type; resolve: unknown }>>();
  /**
   * Where values are written before their bytes are copied out, grown as needed. avsc's
   * toBuffer writes into a shared 1 KiB buffer and writes a larger value a second time.
   */
  private scratch = Buffer.allocUnsafeSlow(64 * 1024);

  constructor(private readonly registry: SchemaRegistryClient) {}

  /**
   * Registers the schemas of these topics in the given order, so a fresh registry hands
   * out the same ids on every machine and two data dirs built from one log agree byte for byte.
   */
  async registerTopics(topics: string[]): Promise<void> {
    for (const topic of topics) if (!this.writers.has(topic)) await this.registerTopic(topic);
  }

  /**
   * Encodes a value for `topic`. Values are taken as immutable: the bytes of the last value
   * are remembered, so one record sent to two topics of the same schema one after the other
   * (a snapshot's history and latest topics) is encoded once. (Remembering every value in a
   * WeakMap cost the collector more than the encoding it saved.)
   */
  async encode(topic: string, value: unknown): Promise<Buffer> {
    if (!this.writers.has(topic)) await this.registerTopic(topic);
    return this.encodeSync(topic, value);
  }

  /** encode() for a topic whose schema is registered already (registerTopics). */
  encodeSync(topic: string, value: unknown): Buffer {
    const writer = this.writers.get(topic);
    if (!writer) throw new Error(`the schema of ${topic} is not registered`);
    if (value === this.last.value && writer.id === this.last.id && typeof value === 'object' && value !== null) return this.last.bytes;
    let end = writer.type.encode(value, this.scratch, HEADER_BYTES);
    while (end < 0) {
      // A negative end is the number of bytes missing.
      this.scratch = Buffer.allocUnsafeSlow(Math.max(2 * this.scratch.length, this.scratch.length - end));
      end = writer.type.encode(value, this.scratch, HEADER_BYTES);
    }
    const out = Buffer.allocUnsafe(end);
    out.writeUInt8(MAGIC_BYTE, 0);
    out.writeUInt32BE(writer.id, 1);
    this.scratch.copy(out, HEADER_BYTES, HEADER_BYTES, end);
    this.last = { value, id: writer.id, bytes: out };
    return out;
  }

  /** Decodes a value of `topic`; throws DecodeError for anything not in the wire format. */
  async decode(topic: string, buf: Buffer): Promise<unknown> {
    if (buf.length < HEADER_BYTES || buf.readUInt8(0) !== MAGIC_BYTE) {
      throw new DecodeError('not in the schema-registry wire format (magic byte 0 missing)');
    }
    const id = buf.readUInt32BE(1);
    const key = `${topic}#${id}`;
    // The promise is cached, so concurrent first decodes share one registry lookup.
    let resolver = this.resolvers.get(key);
    if (!resolver) {
      resolver = this.resolverFor(topic, id);
      this.resolvers.set(key, resolver);
      resolver.catch(() => this.resolvers.delete(key));
    }
    const { reader, resolve } = await resolver;
    try {
      return reader.fromBuffer(buf.subarray(HEADER_BYTES), resolve as never, true);
    } catch (err) {
      throw new DecodeError(`corrupt Avro body: ${(err as Error).message}`);
    }
  }

  private async resolverFor(topic: string, id: number): Promise<{ reader: avro.Type; resolve: unknown }> {
    const reader = this.readerType(topic);
    let writerSchema: string;
    try {
      writerSchema = await this.registry.schemaById(id);
    } catch (err) {
      throw new DecodeError(`unknown schema id ${id}: ${(err as Error).message}`);
    }
    try {
      const writer = avro.Type.forSchema(JSON.parse(writerSchema), { omitRecordMethods: true });
      return { reader, resolve: reader.createResolver(writer) };
    } catch (err) {
      throw new DecodeError(`schema id ${id} cannot be read as ${topic}: ${(err as Error).message}`);
    }
  }

  private readerType(topic: string): avro.Type {
    const typeName = recordTypeOf(topic);
    const cached = this.readerTypes.get(typeName);
    if (cached) return cached;
    // Plain objects, not record instances with methods: validators treat them as data.
    const type = avro.Type.forSchema(JSON.parse(currentSchema(typeName)), { omitRecordMethods: true });
    this.readerTypes.set(typeName, type);
    return type;
  }

  private async registerTopic(topic: string): Promise<{ id: number; type: avro.Type }> {
    const schema = currentSchema(recordTypeOf(topic));
    const id = await this.registry.register(`${topic}-value`, schema);
    const writer = { id, type: avro.Type.forSchema(JSON.parse(schema)) };
    this.writers.set(topic, writer);
    return writer;
  }
}

function recordTypeOf(topic: string): RecordTypeName {
  const entry = catalogueTopic(topic);
  if (!entry) throw new Error(`topic ${topic} is not in the catalogue`);
  return entry.valueType;
}
