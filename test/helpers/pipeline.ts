import { join } from 'node:path';
import type { Config } from '../../infra/config.ts';
import type { EventLog } from '../../infra/log/port.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { quantEngine } from '../../processors/quant-engine/engine.ts';
import { FileCheckpoints } from '../../processors/runtime/checkpoints/files.ts';
import { ProcessorRuntime } from '../../processors/runtime/runtime.ts';
import { PROJECTIONS } from '../../projections/index.ts';
import { startLiveProjections } from '../../projections/runtime/runner.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import type { Codec } from '../../schemas/codec.ts';
import { silentLogger } from './runtime-fixture.ts';
import { waitFor } from '../../infra/wait.ts';

/** Runs the quant engine over everything in the log, checkpointing under `dir`, then stops it. */
export async function runEngineToEnd(dir: string, log: EventLog, codec: Codec): Promise<void> {
  const runtime = new ProcessorRuntime({
    processor: quantEngine,
    log,
    codec,
    checkpoints: new FileCheckpoints(join(dir, 'state')),
    logger: silentLogger,
    maxBatchRecords: 5000,
  });
  void runtime.start();
  await waitFor(() => runtime.caughtUp(), 'the quant engine to process the log', 240_000);
  await runtime.stop();
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
