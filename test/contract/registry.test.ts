import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfluentSchemaRegistry } from '../../infra/registry/confluent.ts';
import { LocalSchemaRegistry } from '../../infra/registry/local.ts';
import type { SchemaRegistryClient } from '../../schemas/registry-port.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { startSchemaRegistryServer, type SchemaRegistryServer } from '../../infra/peers/schema-registry-server.ts';

interface RegistryUnderTest {
  registry: SchemaRegistryClient;
  /** A second client of the same registry, with nothing cached. */
  reopen(): SchemaRegistryClient;
  cleanup(): Promise<void>;
}

const record = (fields: object[]) => ({ type: 'record', name: 'Probe', namespace: 'tqa.test', fields });
const V1 = record([{ name: 'a', type: 'string', doc: 'kept by the registry' }]);
const V2_COMPATIBLE = record([...V1.fields, { name: 'b', type: 'long', default: 0 }]);
const V2_INCOMPATIBLE = record([...V1.fields, { name: 'b', type: 'long' }]);

const TICK = {
  tokenId: 'tk_abc123',
  ts: 1_700_000_000_000,
  priceUsd: 0.0123,
  volumeUsd: 1520.5,
  liquidityUsd: 88_000,
  marketCapUsd: 1_230_000,
  trades: 42,
};

/** What every SchemaRegistryClient adapter must do; run once per adapter. */
function describeRegistryContract(name: string, open: () => Promise<RegistryUnderTest>): void {
  describe(`SchemaRegistryClient contract: ${name}`, () => {
    let subject: RegistryUnderTest;
    beforeAll(async () => {
      subject = await open();
    });
    afterAll(async () => {
      await subject?.cleanup();
    });

    it('gives the same schema the same id under a subject and returns its text by id', async () => {
      const id = await subject.registry.register('same-value', JSON.stringify(V1, null, 2));
      expect(await subject.registry.register('same-value', JSON.stringify(V1))).toBe(id);
      const other = subject.reopen();
      expect(await other.register('same-value', JSON.stringify(V1))).toBe(id);
      expect(JSON.parse(await other.schemaById(id))).toEqual(V1);
    });

    it('refuses a new version that cannot read records written with the latest one', async () => {
      const v1 = await subject.registry.register('evolving-value', JSON.stringify(V1));
      await expect(subject.registry.register('evolving-value', JSON.stringify(V2_INCOMPATIBLE))).rejects.toThrow(
        /incompatible|not backward compatible/i,
      );
      const v2 = await subject.registry.register('evolving-value', JSON.stringify(V2_COMPATIBLE));
      expect(v2).not.toBe(v1);
      expect(JSON.parse(await subject.reopen().schemaById(v2))).toEqual(V2_COMPATIBLE);
    });

    it('throws for an id it never gave', async () => {
      await expect(subject.reopen().schemaById(9_999)).rejects.toThrow();
    });

    it(`round-trips a ${TOPICS.market.name} record through the Codec`, async () => {
      const encoded = await new Codec(subject.registry).encode(TOPICS.market.name, TICK);
      expect(encoded.readUInt8(0)).toBe(0);
      const id = encoded.readUInt32BE(1);
      expect(await subject.registry.register(`${TOPICS.market.name}-value`, await subject.registry.schemaById(id))).toBe(id);
      // Decoded by another client, as a consumer in another process would.
      expect(await new Codec(subject.reopen()).decode(TOPICS.market.name, encoded)).toEqual(TICK);
    });
  });
}

describeRegistryContract('confluent (the REST registry server of tqa peers)', async () => {
  const server = await startSchemaRegistryServer();
  return {
    registry: new ConfluentSchemaRegistry(server.url),
    reopen: () => new ConfluentSchemaRegistry(server.url),
    cleanup: () => server.close(),
  };
});

describeRegistryContract('local (data dir)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-registry-'));
  return {
    registry: new LocalSchemaRegistry(dir),
    reopen: () => new LocalSchemaRegistry(dir),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describe('ConfluentSchemaRegistry', () => {
  let server: SchemaRegistryServer;
  beforeAll(async () => {
    server = await startSchemaRegistryServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('asks the registry once per schema and once per id', async () => {
    const registry = new ConfluentSchemaRegistry(server.url);
    const id = await registry.register('cached-value', JSON.stringify(V1));
    const afterRegister = server.requests.length;
    expect(await registry.register('cached-value', JSON.stringify(V1, null, 1))).toBe(id);
    expect(JSON.parse(await registry.schemaById(id))).toEqual(V1);
    expect(server.requests.length).toBe(afterRegister);

    const reader = new ConfluentSchemaRegistry(server.url);
    await reader.schemaById(id);
    await reader.schemaById(id);
    expect(server.requests.slice(afterRegister)).toEqual([`GET /schemas/ids/${id}`]);
  });
});
