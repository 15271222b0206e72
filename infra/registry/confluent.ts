import { createRequire } from 'node:module';
import { COMPATIBILITY, SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import type { SchemaRegistryAPIClient, SchemaRegistryAPIClientArgs } from '@kafkajs/confluent-schema-registry/dist/api/index.js';
import { z } from 'zod';
import type { SchemaRegistryClient } from '../../schemas/registry-port.ts';

// The library's REST client is a CommonJS default export, which Node's ESM loader and vite
// unwrap differently; require() reads it the same way everywhere.
const { default: createApiClient } = createRequire(import.meta.url)(
  '@kafkajs/confluent-schema-registry/dist/api/index.js',
) as { default: (args: SchemaRegistryAPIClientArgs) => SchemaRegistryAPIClient };

const CLIENT_ID = 'tqa';

/** What GET /schemas/ids/{id} answers; the registry is an edge, so its answer is checked. */
const SchemaById = z.object({ schema: z.string() });

/**
 * A Confluent Schema Registry over @kafkajs/confluent-schema-registry. Subjects are kept at
 * BACKWARD compatibility (the library sets it on a subject's first registration and refuses
 * subjects configured otherwise), so the registry refuses a version that cannot read the
 * previous one, as the local registry does. Ids never change once given, so both directions
 * are cached for the life of the client.
 */
export class ConfluentSchemaRegistry implements SchemaRegistryClient {
  private readonly registry: SchemaRegistry;
  // The library parses fetched schemas into avsc types and drops the text (docs included);
  // its REST client, used directly, returns the registered text itself.
  private readonly api: SchemaRegistryAPIClient;
  private readonly ids = new Map<string, number>();
  private readonly schemas = new Map<number, string>();

  constructor(url: string) {
    this.registry = new SchemaRegistry({ host: url, clientId: CLIENT_ID });
    this.api = createApiClient({ host: url, clientId: CLIENT_ID });
  }

  async register(subject: string, schema: string): Promise<number> {
    const canonical = JSON.stringify(JSON.parse(schema));
    const key = `${subject}\n${canonical}`;
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    let id: number;
    try {
      ({ id } = await this.registry.register(
        { type: SchemaType.AVRO, schema: canonical },
        { subject, compatibility: COMPATIBILITY.BACKWARD },
      ));
    } catch (err) {
      throw new Error(`schema registry refused a schema for ${subject}: ${(err as Error).message}`, { cause: err });
    }
    this.ids.set(key, id);
    this.schemas.set(id, canonical);
    return id;
  }

  async schemaById(id: number): Promise<string> {
    const known = this.schemas.get(id);
    if (known !== undefined) return known;
    const response: { data(): unknown } = await this.api.Schema.find({ id });
    const { schema } = SchemaById.parse(response.data());
    this.schemas.set(id, schema);
    return schema;
  }
}
