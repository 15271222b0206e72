import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { startClickHouseServer } from '../../infra/peers/clickhouse-server.ts';
import { startMockBroker } from '../../infra/peers/kafka-mock-broker.ts';
import { startSchemaRegistryServer } from '../../infra/peers/schema-registry-server.ts';
import type { CliCommand } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';

const USAGE = 'tqa peers [--write-env FILE] [--registry-port N]';

/**
 * The peers of the distributed mode on this machine, for development without Docker: a
 * Kafka-protocol broker (librdkafka's mock, through kcat), a schema registry and a private
 * ClickHouse server. Prints the settings that point `tqa start --roles …` at them and runs
 * until SIGINT or SIGTERM. None of them keeps anything once stopped.
 */
export const peersCommand: CliCommand = {
  name: 'peers',
  summary: 'run a local Kafka mock broker, schema registry and ClickHouse for the distributed roles',
  usage: USAGE,
  async run(args, { logger, stdout, stderr }) {
    const { values } = parseArgs({ args, options: { 'write-env': { type: 'string' }, 'registry-port': { type: 'string', default: '0' } } });
    const registryPort = Number(values['registry-port']);
    if (!Number.isInteger(registryPort) || registryPort < 0 || registryPort > 65_535) throw new UsageError('--registry-port: a port number, 0 for any free one');

    const stopped = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    const stops: (() => Promise<void>)[] = [];
    try {
      // Settled together: when one fails to start, the others are stopped below.
      const [broker, registry, clickhouse] = await Promise.allSettled([startMockBroker(), startSchemaRegistryServer(registryPort), startClickHouseServer()]);
      if (broker.status === 'fulfilled') stops.push(() => broker.value.stop());
      if (registry.status === 'fulfilled') stops.push(() => registry.value.close());
      if (clickhouse.status === 'fulfilled') stops.push(() => clickhouse.value.stop());
      if (broker.status === 'rejected') throw broker.reason;
      if (registry.status === 'rejected') throw registry.reason;
      if (clickhouse.status === 'rejected') throw clickhouse.reason;
      const settings = [
        'TQA_LOG=kafka',
        'TQA_STORE=clickhouse',
        `KAFKA_BROKERS=${broker.value.brokers}`,
        // The mock broker has no InitProducerId, which an idempotent producer needs.
        'KAFKA_IDEMPOTENT=false',
        // A killed member's partitions move after this long: short, for a development loop.
        'KAFKA_SESSION_TIMEOUT_MS=6000',
        `SCHEMA_REGISTRY_URL=${registry.value.url}`,
        `CLICKHOUSE_URL=${clickhouse.value.url}`,
      ].join('\n');
      if (values['write-env'] !== undefined) await writeFile(values['write-env'], settings + '\n');
      stdout.write(settings + '\n');
      stderr.write('peers running (they keep nothing once stopped); Ctrl-C stops them\n');
      await stopped;
    } finally {
      const results = await Promise.allSettled(stops.map((stop) => stop()));
      for (const result of results) if (result.status === 'rejected') logger.error({ err: result.reason }, 'a peer failed to stop');
    }
    return 0;
  },
};
