import { mkdir } from 'node:fs/promises';
import { CATALOGUE } from '../schemas/catalogue.ts';
import { Codec } from '../schemas/codec.ts';
import type { Config } from './config.ts';
import type { EventLog } from './log/port.ts';
import type { Logger } from './logging.ts';
import type { SchemaRegistryClient } from '../schemas/registry-port.ts';

/** The log, registry and codec of the configured mode, with the catalogue's topics ensured. */
export interface LogServices {
  log: EventLog;
  registry: SchemaRegistryClient;
  codec: Codec;
  close(): Promise<void>;
}

export async function openLogServices(config: Config, logger: Logger): Promise<LogServices> {
  let log: EventLog;
  let registry: SchemaRegistryClient;
  if (config.TQA_LOG === 'embedded') {
    await mkdir(config.TQA_DATA_DIR, { recursive: true });
    const { FileEventLog } = await import('./log/file/file-log.ts');
    const { LocalSchemaRegistry } = await import('./registry/local.ts');
    log = await FileEventLog.open({
      dir: config.TQA_DATA_DIR,
      fsync: config.TQA_LOG_FSYNC,
      segmentBytes: config.TQA_LOG_SEGMENT_BYTES,
      logger: logger.child({ component: 'file-log' }),
    });
    registry = new LocalSchemaRegistry(config.TQA_DATA_DIR);
  } else {
    const { KafkaEventLog } = await import('./log/kafka/kafka-log.ts');
    const { ConfluentSchemaRegistry } = await import('./registry/confluent.ts');
    log = new KafkaEventLog({
      brokers: config.KAFKA_BROKERS.split(','),
      clientId: config.KAFKA_CLIENT_ID,
      idempotent: config.KAFKA_IDEMPOTENT,
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      logger: logger.child({ component: 'kafka' }),
    });
    registry = new ConfluentSchemaRegistry(config.SCHEMA_REGISTRY_URL);
  }
  await log.ensureTopics(CATALOGUE);
  const codec = new Codec(registry);
  await codec.registerTopics(CATALOGUE.map((t) => t.name));
  return { log, registry, codec, close: () => log.close() };
}
