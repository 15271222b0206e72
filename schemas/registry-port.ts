/**
 * Where schema ids come from. The embedded mode keeps a registry file in the data dir
 * (infra/registry/local.ts); the Kafka mode talks to a Confluent Schema Registry
 * (infra/registry/confluent.ts). Ids are what the wire format carries.
 * A type only, it lives in schemas/ with the codec that uses it; infra's registries implement it.
 */
export interface SchemaRegistryClient {
  /** Registers an Avro schema under a subject (idempotent) and returns its global id. */
  register(subject: string, schema: string): Promise<number>;
  /** The Avro schema (JSON text) registered with this id; throws if unknown. */
  schemaById(id: number): Promise<string>;
}
