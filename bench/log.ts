import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { FileEventLog } from '../infra/log/file/file-log.ts';
import type { OutgoingRecord } from '../infra/log/port.ts';
import { benchKafka } from './log-kafka.ts';
import { report } from './results.ts';

// The mock broker keeps about 5 MB per partition, so the Kafka run stays below that.
const RECORDS = 100_000;
const BATCH = 1000;

/** Records shaped like market ticks: keyed by one of 500 tokens, ~90-byte values. */
function makeRecords(n: number): OutgoingRecord[] {
  const value = Buffer.alloc(90, 7);
  return Array.from({ length: n }, (_, i) => ({ key: `tk_${i % 500}`, value, timestamp: 1_700_000_000_000 + i }));
}

async function benchEmbedded(records: OutgoingRecord[], fsync: 'always' | 'never') {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-log-'));
  const log = await FileEventLog.open({ dir, fsync, segmentBytes: 64 * 1024 * 1024, logger: pino({ level: 'silent' }) });
  try {
    await log.ensureTopics([{ name: 'bench', partitions: 4, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);
    const appendStart = performance.now();
    for (let i = 0; i < records.length; i += BATCH) await log.append('bench', records.slice(i, i + BATCH));
    const appendSeconds = (performance.now() - appendStart) / 1000;

    let seen = 0;
    const consumeStart = performance.now();
    const consumer = log.consumer({ groupId: 'bench', topics: ['bench'], fromBeginning: true, maxBatchRecords: 5000 });
    await new Promise<void>((resolve) => {
      void consumer.run(async (batch) => {
        seen += batch.records.length;
        if (seen >= records.length) resolve();
      });
    });
    const consumeSeconds = (performance.now() - consumeStart) / 1000;
    await consumer.stop();
    return { appendPerSec: records.length / appendSeconds, consumePerSec: records.length / consumeSeconds };
  } finally {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US').padStart(12);

export async function benchLog(): Promise<void> {
  const records = makeRecords(RECORDS);
  const synced = await benchEmbedded(records, 'always');
  const unsynced = await benchEmbedded(records, 'never');
  const kafka = await benchKafka(records, `bench-${Date.now()}`);
  process.stdout.write(`${RECORDS} records of ~100 bytes, appended in batches of ${BATCH}\n`);
  process.stdout.write(`${'adapter'.padEnd(36)}${'append/s'.padStart(12)}${'consume/s'.padStart(12)}\n`);
  process.stdout.write(`${'embedded file log, fsync=always'.padEnd(36)}${fmt(synced.appendPerSec)}${fmt(synced.consumePerSec)}\n`);
  process.stdout.write(`${'embedded file log, fsync=never'.padEnd(36)}${fmt(unsynced.appendPerSec)}${fmt(unsynced.consumePerSec)}\n`);
  process.stdout.write(`${'kafkajs on the mock broker'.padEnd(36)}${fmt(kafka.appendPerSec)}${fmt(kafka.consumePerSec)}\n`);
  process.stdout.write(`${'kafkajs no-op eachBatch consumer'.padEnd(36)}${''.padStart(12)}${fmt(kafka.noopConsumePerSec)}\n`);
  process.stdout.write(
    `ratio embedded(fsync=always)/kafkajs: append ${(synced.appendPerSec / kafka.appendPerSec).toFixed(2)}x, ` +
      `consume ${(synced.consumePerSec / kafka.consumePerSec).toFixed(2)}x\n` +
      `ratio kafka adapter consume / no-op kafkajs consume: ${(kafka.consumePerSec / kafka.noopConsumePerSec).toFixed(2)}\n`,
  );
  const noop = { name: 'no-op kafkajs consumer', value: kafka.noopConsumePerSec };
  report({ figure: 'embedded log append, fsync=always', value: synced.appendPerSec, unit: 'records/s', baseline: { name: 'kafkajs append', value: kafka.appendPerSec } });
  report({ figure: 'embedded log consume', value: synced.consumePerSec, unit: 'records/s', baseline: noop });
  report({ figure: 'Kafka adapter consume', value: kafka.consumePerSec, unit: 'records/s', baseline: noop });
}
