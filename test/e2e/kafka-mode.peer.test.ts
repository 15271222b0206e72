import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config.ts';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import { KafkaEventLog } from '../../infra/log/kafka/kafka-log.ts';
import type { EventLog } from '../../infra/log/port.ts';
import { ConfluentSchemaRegistry } from '../../infra/registry/confluent.ts';
import { openStore } from '../../projections/open-store.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { replayProjections } from '../../projections/runtime/replay.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { Codec } from '../../schemas/codec.ts';
import { startSchemaRegistryServer, type SchemaRegistryServer } from '../../infra/peers/schema-registry-server.ts';
import { startMockBroker, type MockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import { projectToEnd, runQuantToEnd } from '../helpers/pipeline.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { dumpStore } from '../helpers/store-dump.ts';

const WORLD = { seed: 777, days: 1, endMs: Date.UTC(2026, 4, 1), tokens: 20, authors: 120 };

/** Feed → quant engine → live projections into DuckDB on one log; the tables, and a replay of them. */
async function runPipeline(dir: string, log: EventLog, codec: Codec) {
  await seedHistory({ log, codec, dataDir: dir, ...WORLD });
  await runQuantToEnd(dir, log, codec);
  const config = loadConfig({ TQA_DATA_DIR: dir });
  const store = await openStore(config, silentLogger);
  await projectToEnd(config, log, codec, store);
  const live = await dumpStore(store);
  await store.close();

  const replayed = await openStore(config, silentLogger, { duckdbPath: join(dir, 'replayed.duckdb') });
  await replayProjections({ projections: PROJECTIONS, log, codec, store: replayed, logger: silentLogger, runId: 'kafka-mode' });
  const rebuilt = await dumpStore(replayed);
  await replayed.close();
  return { live, rebuilt };
}

describe('the distributed mode (Kafka protocol broker + schema registry) against the embedded mode', () => {
  let broker: MockBroker;
  let registry: SchemaRegistryServer;
  const dirs: string[] = [];
  let kafka: Awaited<ReturnType<typeof runPipeline>>;
  let embedded: Awaited<ReturnType<typeof runPipeline>>;

  beforeAll(async () => {
    [broker, registry] = await Promise.all([startMockBroker(), startSchemaRegistryServer()]);
    const [kafkaDir, embeddedDir] = await Promise.all([mkdtemp(join(tmpdir(), 'tqa-kafka-')), mkdtemp(join(tmpdir(), 'tqa-emb-'))]);
    dirs.push(kafkaDir, embeddedDir);

    const log = new KafkaEventLog({ brokers: [broker.brokers], clientId: 'mode-test', idempotent: false, logger: pino({ level: 'silent' }), sessionTimeoutMs: 6_000 });
    await log.ensureTopics(CATALOGUE);
    const codec = new Codec(new ConfluentSchemaRegistry(registry.url));
    await codec.registerTopics(CATALOGUE.map((t) => t.name));
    kafka = await runPipeline(kafkaDir, log, codec);
    await log.close();

    const local = await openEmbedded(embeddedDir);
    embedded = await runPipeline(embeddedDir, local.log, local.codec);
    await local.log.close();
  }, 600_000);

  afterAll(async () => {
    await Promise.all([broker?.stop(), registry?.close()]);
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('builds the same store from Kafka as from the file log, and replays it from Kafka identically', () => {
    expect(kafka.live.latest_snapshots.length).toBeGreaterThan(10);
    expect(kafka.live.signals.length).toBeGreaterThan(0);
    expect(kafka.rebuilt).toEqual(kafka.live);
    expect(kafka.live).toEqual(embedded.live);
  });
});
