import { join } from 'node:path';
import type { Config } from '../../infra/config.ts';
import type { EventLog } from '../../infra/log/port.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { QUANT_STAGES } from '../../processors/index.ts';
import { localCheckpoints } from '../../processors/runtime/checkpoints/keyed.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { startLiveProjections } from '../../projections/runtime/runner.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { Codec } from '../../schemas/codec.ts';
import { silentLogger } from './runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * Runs the quant engine over everything in the log and the outcomes, scores and analogs stages
 * behind it, checkpointing under `dir`, then stops them upstream first: each once it has
 * caught up (its commit on stop is the progress the stages behind it wait for).
 */
export async function runQuantToEnd(dir: string, log: EventLog, codec: Codec): Promise<void> {
  const runtimes = QUANT_STAGES.map(
    (processor) =>
      new ProcessorRuntime<unknown>({
        processor,
        log,
        codec,
        checkpoints: localCheckpoints(join(dir, 'state'), processor),
        logger: silentLogger,
        maxBatchRecords: 5000,
      }),
  );
  for (const runtime of runtimes) void runtime.start();
  for (const runtime of runtimes) {
    await waitFor(() => runtime.caughtUp(), 'the quant engine and its stages to process the log', 240_000);
    await runtime.stop();
  }
}

/** Runs every live projection into `store` until caught up with the log, then stops them. */
export async function projectToEnd(
  config: Config,
  log: EventLog,
  codec: Codec,
  store: AnalyticalStore<ProjectionTables>,
): Promise<void> {
  const projections = startLiveProjections({ config, projections: PROJECTIONS, log, codec, store, logger: silentLogger });
  await waitFor(() => projections.caughtUp(), 'the live projections', 240_000);
  await projections.stop();
}
