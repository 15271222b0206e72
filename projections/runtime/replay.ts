import { setTimeout as delay } from 'node:timers/promises';
import type { EventLog } from '../../infra/log/port.ts';
import type { Logger } from '../../infra/logging.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { ProjectionTables } from '../tables.ts';
import type { AnyProjection } from './projection.ts';
import { startProjections, type ProjectionStats } from './runner.ts';

export interface ReplayOptions {
  projections: readonly AnyProjection[];
  log: EventLog;
  codec: Codec;
  /** A fresh store: replay only adds rows. */
  store: AnalyticalStore<ProjectionTables>;
  logger: Logger;
  /** Makes the consumer groups `replay.<projection>.<runId>`, apart from the live ones. */
  runId: string;
  onProgress?: (progress: { records: number; total: number }) => void;
  signal?: AbortSignal;
  /** How often progress and the end of the log are checked. */
  pollMs?: number;
}

export interface ReplayResult {
  /** Records handled, over every projection. */
  records: number;
  rowsWritten: number;
  failed: number;
  /** From the start of consuming until every projection had caught up. */
  seconds: number;
  byProjection: Record<string, ProjectionStats>;
}

/**
 * Rebuilds projections by running their runners from the first retained record of every
 * partition in consumer groups of their own, until each has caught up with the end of its
 * topics (ends re-read at each check, so records appended meanwhile are included). Records
 * that fail are logged and counted, not dead-lettered again: the live run did that, and its
 * dead letters are themselves replayed by the dead_letters projection.
 */
export async function replayProjections(options: ReplayOptions): Promise<ReplayResult> {
  const { projections, log, signal } = options;
  let total = 0;
  for (const topic of new Set(projections.flatMap((p) => p.topics))) {
    const [starts, ends] = await Promise.all([log.startOffsets(topic), log.endOffsets(topic)]);
    const readers = projections.filter((p) => p.topics.includes(topic)).length;
    for (const { partition, offset } of ends) {
      total += readers * (offset - (starts.find((s) => s.partition === partition)?.offset ?? 0));
    }
  }
  signal?.throwIfAborted();
  const started = performance.now();
  const set = startProjections(projections, {
    log,
    codec: options.codec,
    store: options.store,
    logger: options.logger,
    deadLetters: 'log',
    flush: 'background',
    groupIdOf: (p) => `replay.${p.name}.${options.runId}`,
  });
  const handled = (): number => set.runners.reduce((sum, r) => sum + r.stats().records, 0);
  try {
    while (!(await set.caughtUp())) {
      options.onProgress?.({ records: handled(), total });
      await Promise.race([delay(options.pollMs ?? 200, undefined, { signal }), set.failed]);
    }
  } finally {
    await set.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const byProjection = Object.fromEntries(projections.map((p, i) => [p.name, set.runners[i].stats()]));
  const stats = Object.values(byProjection);
  options.onProgress?.({ records: handled(), total });
  return {
    records: handled(),
    rowsWritten: stats.reduce((sum, s) => sum + s.rowsWritten, 0),
    failed: stats.reduce((sum, s) => sum + s.failed, 0),
    seconds,
    byProjection,
  };
}
