import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { onWorkerThread } from '../cli/roles/worker-thread.ts';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig, type Config } from '../infra/config.ts';
import { seedHistory } from '../infra/feeds/sim/runner.ts';
import { outcomesStage } from '../processors/outcomes/outcomes.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { CATALOGUE, TOPICS } from '../schemas/catalogue.ts';
import { committedToEnd, runToEnd } from './processor-runs.ts';
import { atLeast, report } from './results.ts';

const DAYS = Number(process.env.BENCH_PIPELINE_DAYS ?? 7);
const logger = pino({ level: 'warn' });
const rate = (n: number) => `${Math.round(n).toLocaleString('en-US')} events/s`;

/**
 * The embedded pipeline over the default simulated world, from offset 0 to the end of the
 * seeded history: the quant engine, against a baseline in the same run that only reads and
 * decodes the same input records; then the outcomes stage behind it; then both again on a
 * copy of the same log, each on a worker thread of its own as `tqa start` runs them, against
 * the two one after the other on one thread.
 */
export async function benchPipeline(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-pipeline-'));
  const copy = `${dir}-threads`;
  const config = loadConfig({ TQA_DATA_DIR: dir, TQA_LOG_FSYNC: 'always' });
  const services = await openLogServices(config, logger);
  try {
    const seeded = await seedHistory({ log: services.log, codec: services.codec, dataDir: dir, seed: 1, days: DAYS, endMs: Date.UTC(2026, 5, 1) });
    await cp(dir, copy, { recursive: true });
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

    const engine = await runToEnd(quantEngine, config, services, logger);
    const stage = await runToEnd(outcomesStage, config, services, logger);
    const outputs = await Promise.all(
      CATALOGUE.filter((t) => quantEngine.outputs.includes(t.name) || outcomesStage.outputs.includes(t.name)).map(async (t) => [
        t.name,
        (await services.log.endOffsets(t.name)).reduce((sum, p) => sum + p.offset, 0),
      ]),
    );
    const eventsPerSec = engine.processed / engine.seconds;
    process.stdout.write(`${DAYS} days of the default world: ${seeded.records.toLocaleString('en-US')} input events\n`);
    process.stdout.write(`baseline, read and decode the inputs: ${rate(readPerSec)}\n`);
    process.stdout.write(
      `quant engine (log → every module → derived topics): ${rate(eventsPerSec)} (${engine.seconds.toFixed(1)} s, ${(eventsPerSec / readPerSec).toFixed(2)} of the baseline)\n`,
    );
    process.stdout.write(`outcomes stage behind it: ${rate(stage.processed / stage.seconds)} of its own input (${stage.seconds.toFixed(1)} s)\n`);
    process.stdout.write(`outputs: ${outputs.map(([t, n]) => `${t} ${n.toLocaleString('en-US')}`).join(', ')}\n`);
    report({
      figure: `quant engine, ${DAYS} days of the default world, embedded (one thread)`,
      value: eventsPerSec,
      unit: 'events/s',
      baseline: { name: 'read and decode the inputs', value: readPerSec },
      target: atLeast(50_000, 'events/s'),
    });

    const oneThread = total / (engine.seconds + stage.seconds);
    const twoThreads = total / (await onTwoThreads(loadConfig({ TQA_DATA_DIR: copy, TQA_LOG_FSYNC: 'always' })));
    process.stdout.write(
      `engine and outcomes stage, input events/s to both done: ${rate(twoThreads)} on two threads at once, ${rate(oneThread)} one after the other on one\n`,
    );
    report({
      figure: `quant engine and outcomes stage, ${DAYS} days, embedded, two threads`,
      value: twoThreads,
      unit: 'events/s',
      baseline: { name: 'the two one after the other on one thread', value: oneThread },
      note: 'the stage waits for the engine’s committed progress (a watermark join), so the two overlap only as far as the engine’s checkpoints allow',
    });
  } finally {
    await services.close();
    await rm(dir, { recursive: true, force: true });
    await rm(copy, { recursive: true, force: true });
  }
}

/**
 * The engine and the outcomes stage on worker threads of their own over the log in `config`'s
 * data dir, as the processors role runs them; seconds until both groups' commits reach the
 * ends of their inputs.
 */
async function onTwoThreads(config: Config): Promise<number> {
  const processors = [quantEngine, outcomesStage];
  const roles = processors.map((p) => onWorkerThread(p.name, new URL('../cli/roles/processors.ts', import.meta.url), 'processorRole', { args: [p.name] }));
  const services = await openLogServices(config, logger);
  const start = performance.now();
  const running = await Promise.all(roles.map((role) => role.start({ config, logger, services, store: () => Promise.reject(new Error('no store here')), stdout: process.stdout })));
  try {
    for (const processor of processors) {
      while (!(await committedToEnd(services.log, processor))) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return (performance.now() - start) / 1000;
  } finally {
    for (const role of running) await role.stop();
    await services.close();
  }
}
