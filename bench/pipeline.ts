import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { seedHistory } from '../infra/feeds/sim/runner.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { FileCheckpoints } from '../processors/runtime/checkpoints/files.ts';
import { ProcessorRuntime } from '../processors/runtime/runtime.ts';
import { CATALOGUE, TOPICS } from '../schemas/catalogue.ts';
import { atLeast, report } from './results.ts';

const DAYS = Number(process.env.BENCH_PIPELINE_DAYS ?? 7);

/**
 * The embedded pipeline over the default simulated world: the quant engine from offset 0
 * to the end of the seeded history, against a baseline in the same run that only reads
 * and decodes the same input records.
 */
export async function benchPipeline(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-pipeline-'));
  const logger = pino({ level: 'warn' });
  const config = loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'always' });
  const services = await openLogServices(config, logger);
  try {
    const seeded = await seedHistory({ log: services.log, codec: services.codec, dataDir: dir, seed: 1, days: DAYS, endMs: Date.UTC(2026, 5, 1) });
    const inputs = [TOPICS.tokens.name, TOPICS.posts.name, TOPICS.market.name];

    // Baseline: a consumer group that reads and decodes the same input, and does nothing else.
    const total = seeded.records;
    const readStart = performance.now();
    let decoded = 0;
    const reader = services.log.consumer({ groupId: 'bench.read-decode', topics: inputs, fromBeginning: true, maxBatchRecords: 5000 });
    await new Promise<void>((resolve) => {
      void reader.run(async (batch) => {
        for (const r of batch.records) if (r.value) await services.codec.decode(batch.topic, r.value);
        decoded += batch.records.length;
        if (decoded >= total) resolve();
      });
    });
    const readPerSec = decoded / ((performance.now() - readStart) / 1000);
    await reader.stop();

    const runtime = new ProcessorRuntime({
      processor: quantEngine,
      log: services.log,
      codec: services.codec,
      checkpoints: new FileCheckpoints(join(dir, 'state')),
      logger,
      maxBatchRecords: 5000,
      // As `tqa start` runs it: the cost of checkpointing a growing state is part of the rate.
      checkpointIntervalMs: config.TQA_CHECKPOINT_INTERVAL_MS,
      checkpointSaveShare: config.TQA_CHECKPOINT_SAVE_SHARE,
    });
    const start = performance.now();
    void runtime.start();
    while (!(await runtime.caughtUp())) await new Promise((resolve) => setTimeout(resolve, 250));
    const seconds = (performance.now() - start) / 1000;
    await runtime.stop();
    const outputs = await Promise.all(
      CATALOGUE.filter((t) => quantEngine.outputs.includes(t.name)).map(async (t) => [
        t.name,
        (await services.log.endOffsets(t.name)).reduce((sum, p) => sum + p.offset, 0),
      ]),
    );
    const eventsPerSec = runtime.stats.processed / seconds;
    process.stdout.write(`${DAYS} days of the default world: ${seeded.records.toLocaleString('en-US')} input events\n`);
    process.stdout.write(`baseline, read and decode the inputs: ${Math.round(readPerSec).toLocaleString('en-US')} events/s\n`);
    process.stdout.write(
      `quant engine (log → every module → derived topics): ${Math.round(eventsPerSec).toLocaleString('en-US')} events/s ` +
        `(${seconds.toFixed(1)} s, ${(eventsPerSec / readPerSec).toFixed(2)} of the baseline)\n`,
    );
    process.stdout.write(`outputs: ${outputs.map(([t, n]) => `${t} ${n.toLocaleString('en-US')}`).join(', ')}\n`);
    report({
      figure: `quant engine, ${DAYS} days of the default world, embedded (one thread)`,
      value: eventsPerSec,
      unit: 'events/s',
      baseline: { name: 'read and decode the inputs', value: readPerSec },
      target: atLeast(50_000, 'events/s'),
    });
  } finally {
    await services.close();
    await rm(dir, { recursive: true, force: true });
  }
}
