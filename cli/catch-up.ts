import type { EventLog, PartitionOffset } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { PROCESSORS } from '../processors/index.ts';
import { PROJECTIONS } from '../projections/index.ts';
import { liveGroupId } from '../projections/runtime/runner.ts';
import { Progress } from './progress.ts';

/** A stage whose consumer group's lag says how far the service is behind its log. */
interface Stage {
  group: string;
  topics: readonly string[];
}

const STAGES: readonly Stage[] = [
  ...PROCESSORS.map((p) => ({ group: p.name, topics: p.inputs })),
  ...PROJECTIONS.map((p) => ({ group: liveGroupId(p), topics: p.topics })),
];

/**
 * At or below this many records behind, a stage counts as caught up: once live, a processor
 * commits only at its checkpoints (TQA_CHECKPOINT_INTERVAL_MS), so its lag never stays at 0.
 */
export const CAUGHT_UP_LAG = 1_000;

export interface CatchUpStatus {
  /** Every stage is at most CAUGHT_UP_LAG behind, and no history is being seeded. */
  caughtUp: boolean;
  /** Records not yet covered by every stage's saved state or stored rows, summed over the stages. */
  lagRecords: number;
  /** Records covered, summed over the stages: with the lag, the whole work of a catch-up. */
  doneRecords: number;
  stages: { name: string; lagRecords: number }[];
  /** Epoch ms of the measurement. */
  measuredAt: number;
}

/**
 * Measures every stage's lag every few seconds (processors: the input their saved state
 * covers; projections: the records whose rows are stored, as `tqa topics` shows), for
 * `/v1/health` and the progress line `tqa start` prints while it catches up.
 */
export class CatchUpMonitor {
  private latest: CatchUpStatus | null = null;
  private timer: NodeJS.Timeout | undefined;
  private measuring: Promise<void> | undefined;

  constructor(
    private readonly options: {
      log: EventLog;
      logger: Logger;
      intervalMs?: number;
      /** Whether a first start's history is still being seeded: the log is then not yet whole, so no lag says caught up. */
      seeding?: () => boolean;
    },
  ) {}

  start(onMeasured?: (status: CatchUpStatus) => void): void {
    const tick = (): void => {
      this.measuring ??= this.measure()
        .then((status) => {
          this.latest = status;
          onMeasured?.(status);
        })
        .catch((err: unknown) => this.options.logger.warn({ err }, 'measuring the catch-up failed'))
        .finally(() => (this.measuring = undefined));
    };
    tick();
    this.timer = setInterval(tick, this.options.intervalMs ?? 2_000);
    this.timer.unref();
  }

  /** The last measurement; null before the first. */
  current(): CatchUpStatus | null {
    return this.latest;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.measuring;
  }

  private async measure(): Promise<CatchUpStatus> {
    const { log } = this.options;
    const topics = [...new Set(STAGES.flatMap((s) => s.topics))];
    const bounds = new Map<string, { starts: PartitionOffset[]; ends: PartitionOffset[] }>();
    for (const topic of topics) {
      const [starts, ends] = await Promise.all([log.startOffsets(topic), log.endOffsets(topic)]);
      bounds.set(topic, { starts, ends });
    }
    const stages: CatchUpStatus['stages'] = [];
    let done = 0;
    for (const stage of STAGES) {
      let lag = 0;
      for (const topic of stage.topics) {
        const { starts, ends } = bounds.get(topic)!;
        const committed = await log.committedOffsets(stage.group, topic);
        for (const { partition, offset: end } of ends) {
          const start = starts.find((s) => s.partition === partition)?.offset ?? 0;
          const at = Math.min(end, Math.max(start, committed.find((c) => c.partition === partition)?.offset ?? start));
          lag += end - at;
          done += at - start;
        }
      }
      stages.push({ name: stage.group, lagRecords: lag });
    }
    return {
      caughtUp: !this.options.seeding?.() && stages.every((s) => s.lagRecords <= CAUGHT_UP_LAG),
      lagRecords: stages.reduce((sum, s) => sum + s.lagRecords, 0),
      doneRecords: done,
      stages,
      measuredAt: Date.now(),
    };
  }
}

/**
 * Shows a catch-up on `stream` (stderr): records every stage worked through since it began,
 * the share of this catch-up's work done (the whole grows as the engine's outputs give the
 * projections more), rate and time left; redrawn on a terminal, a plain line every few seconds otherwise;
 * one line when it is done. Quiet while the service is caught up.
 */
export function catchUpProgress(stream: NodeJS.WritableStream): (status: CatchUpStatus) => void {
  let progress: Progress | undefined;
  let doneAtStart = 0;
  return (status) => {
    if (status.caughtUp) {
      progress?.finish(`caught up (lag ${status.lagRecords} records)`);
      progress = undefined;
      return;
    }
    if (!progress) {
      progress = new Progress({ stream, label: 'catching up', unit: 'records' });
      doneAtStart = status.doneRecords;
    }
    const behind = status.stages.reduce((worst, s) => (s.lagRecords > worst.lagRecords ? s : worst));
    const done = status.doneRecords - doneAtStart;
    // The share of this catch-up's work, so the time left is the lag at the rate so far.
    progress.update(done, done / (done + status.lagRecords), `lag ${status.lagRecords}, most behind: ${behind.name}`);
  };
}
