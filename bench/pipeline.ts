import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { seedHistory } from '../infra/feeds/sim/runner.ts';
import { analogsStage } from '../processors/analogs/analogs.ts';
import { outcomesStage } from '../processors/outcomes/outcomes.ts';
import { QUANT_STAGES } from '../processors/index.ts';
import { quantEngine } from '../processors/quant-engine/engine.ts';
import { scoresStage } from '../processors/scores/scores.ts';
import { CATALOGUE, TOPICS } from '../schemas/catalogue.ts';
import { onThreadsToEnd, runToEnd } from './processor-runs.ts';
import { atLeast, eventsPerSecond as rate, report } from './results.ts';

const DAYS = Number(process.env.BENCH_PIPELINE_DAYS ?? 7);
const logger = pino({ level: 'warn' });

/**
 * The embedded pipeline over the default simulated world, from offset 0 to the end of the
 * seeded history: the quant engine, against a baseline in the same run that only reads and
 * decodes the same input records; then the outcomes and analogs stages behind it; then all
 * three again on a copy of the same log, each on worker threads of its own as `tqa start`
 * runs them, against the three one after the other on one thread.
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
    const scores = await runToEnd(scoresStage, config, services, logger);
    const analogs = await runToEnd(analogsStage, config, services, logger);
    const outputs = await Promise.all(
      CATALOGUE.filter((t) => QUANT_STAGES.some((p) => p.outputs.includes(t.name))).map(async (t) => [
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
    process.stdout.write(`scores stage behind it: ${rate(scores.processed / scores.seconds)} of its own input (${scores.seconds.toFixed(1)} s)\n`);
    process.stdout.write(`analogs stage behind them: ${rate(analogs.processed / analogs.seconds)} of its own input (${analogs.seconds.toFixed(1)} s)\n`);
    process.stdout.write(`outputs: ${outputs.map(([t, n]) => `${t} ${n.toLocaleString('en-US')}`).join(', ')}\n`);
    report({
      figure: `quant engine, ${DAYS} days of the default world, embedded (one thread)`,
      value: eventsPerSec,
      unit: 'events/s',
      baseline: { name: 'read and decode the inputs', value: readPerSec },
      target: atLeast(50_000, 'events/s'),
    });

    const oneThread = total / (engine.seconds + stage.seconds + scores.seconds + analogs.seconds);
    const onThreads = total / (await onThreadsToEnd(loadConfig({ TQA_DATA_DIR: copy, TQA_LOG_FSYNC: 'always' }), QUANT_STAGES, logger)).seconds;
    process.stdout.write(
      `engine, outcomes, scores and analogs stages, input events/s to all done: ${rate(onThreads)} on threads of their own at once, ${rate(oneThread)} one after the other on one\n`,
    );
    report({
      figure: `quant engine and its stages, ${DAYS} days, embedded, threads of their own`,
      value: onThreads,
      unit: 'events/s',
      baseline: { name: 'the four one after the other on one thread', value: oneThread },
      note: 'the stages wait for the engine’s committed progress (a watermark join), so they overlap only as far as the engine’s checkpoints allow',
    });
  } finally {
    await services.close();
    await rm(dir, { recursive: true, force: true });
    await rm(copy, { recursive: true, force: true });
  }
}
