import type { EventLog, PartitionOffset } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { PROCESSORS } from '../processors/index.ts';
import { PROJECTIONS } from '../projections/index.ts';
import { liveGroupId } from '../projections/runtime/runner.ts';
import { formatCount, Progress } from './progress.ts';
import { secondsLeft, SmoothedEnd, StageRates } from './time-left.ts';

/** A stage whose consumer group's lag says how far the service is behind its log; a processor also writes topics. */
interface Stage {
  group: string;
  topics: readonly string[];
  outputs: readonly string[];
}

export const STAGES: readonly Stage[] = [
  ...PROCESSORS.map((p) => ({ group: p.name, topics: p.inputs, outputs: p.outputs })),
  ...PROJECTIONS.map((p) => ({ group: liveGroupId(p), topics: p.topics, outputs: [] })),
];

/**
 * At or below this many records behind, a stage counts as caught up: once live, a processor
 * commits only at its checkpoints (TQA_CHECKPOINT_INTERVAL_MS), so its lag never stays at 0.
 */
export const CAUGHT_UP_LAG = 1_000;

/** The name of the count of every stage's records together, whose rate paces the time left. */
const ALL_STAGES = 'all stages';

export interface CatchUpStatus {
  /** Every stage is at most CAUGHT_UP_LAG behind, and no history is being seeded. */
  caughtUp: boolean;
  /** Records not yet covered by every stage's saved state or stored rows, summed over the stages. */
  lagRecords: number;
  /** Records covered, summed over the stages. */
  doneRecords: number;
  /**
   * The lag plus the records the processors are still to write for the stages after them, at
   * the rate they wrote so far (estimatedRemaining): with doneRecords, the whole work of a catch-up.
   */
  remainingRecords: number;
  /** Seconds until every stage is caught up (time-left.ts); null while seeding and in the first 10 s of a catch-up. */
  timeLeftSeconds: number | null;
  /** The stage with the most records left (its lag and those still to be written for it); null when none has any. */
  mostBehind: string | null;
  /** Each stage with its lag and the records per second it covered over the last minute (null until measured). */
  stages: { name: string; lagRecords: number; ratePerSecond: number | null }[];
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
  private readonly stageRates = new StageRates();
  private readonly totalRate = new StageRates();
  private readonly end = new SmoothedEnd();
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
    const stages: (StageProgress & { name: string })[] = [];
    for (const stage of STAGES) {
      let lag = 0;
      let done = 0;
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
      stages.push({ ...stage, name: stage.group, lagRecords: lag, done });
    }
    const measuredAt = Date.now();
    const doneRecords = stages.reduce((sum, s) => sum + s.done, 0);
    this.stageRates.add(measuredAt, new Map(stages.map((s) => [s.name, s.done])));
    this.totalRate.add(measuredAt, new Map([[ALL_STAGES, doneRecords]]));
    const records = (topic: string) => {
      const { starts, ends } = bounds.get(topic) ?? { starts: [], ends: [] };
      return ends.reduce((sum, e) => sum + e.offset, 0) - starts.reduce((sum, e) => sum + e.offset, 0);
    };
    const unwritten = unwrittenRecords(stages, records);
    const left = stages.map((s, i) => ({ name: s.name, records: s.lagRecords + unwritten[i] }));
    const remainingRecords = left.reduce((sum, s) => sum + s.records, 0);
    const mostBehind = left.reduce((most, s) => (s.records > most.records ? s : most), { name: null as string | null, records: 0 }).name;
    const seeding = this.options.seeding?.() ?? false;
    // While seeding, the log is not whole: no time left would hold.
    const seconds = seeding ? null : secondsLeft(remainingRecords, this.totalRate.rate(ALL_STAGES));
    return {
      caughtUp: !seeding && stages.every((s) => s.lagRecords <= CAUGHT_UP_LAG),
      lagRecords: stages.reduce((sum, s) => sum + s.lagRecords, 0),
      doneRecords,
      remainingRecords,
      timeLeftSeconds: this.end.update(measuredAt, seconds),
      mostBehind,
      stages: stages.map((s) => ({ name: s.name, lagRecords: s.lagRecords, ratePerSecond: this.stageRates.rate(s.name) })),
      measuredAt,
    };
  }
}

/** What estimatedRemaining needs of a stage: its topics, and how many of their records it covered and has yet to. */
export interface StageProgress extends Stage {
  done: number;
  lagRecords: number;
}

/**
 * The records every stage is still to work through, counting those not written yet: its lag
 * plus unwrittenRecords.
 */
export function estimatedRemaining(stages: readonly StageProgress[], records: (topic: string) => number): number {
  const unwritten = unwrittenRecords(stages, records);
  return stages.reduce((sum, s, i) => sum + s.lagRecords + unwritten[i], 0);
}

/**
 * Per stage, the records of its topics not written yet: a topic a processor writes is
 * expected to grow to its size now (`records`) times the processor's whole input over the
 * input it covered, its inputs expected likewise when a processor writes them. Before a
 * processor covered anything its topics count as they are. An estimate: the engine writes
 * several records per input, so its lag alone would promise the end far too early; and what a
 * processor covered is its last checkpoint, behind what it wrote, so it runs high near the end.
 */
export function unwrittenRecords(stages: readonly StageProgress[], records: (topic: string) => number): number[] {
  const writer = new Map(stages.flatMap((s) => s.outputs.map((topic) => [topic, s] as const)));
  const expected = new Map<string, number>();
  const visiting = new Set<string>();
  const expectedRecords = (topic: string): number => {
    let total = expected.get(topic);
    if (total !== undefined) return total;
    total = records(topic);
    const stage = writer.get(topic);
    if (stage && stage.done > 0 && !visiting.has(topic)) {
      visiting.add(topic);
      const inputs = stage.topics.reduce((sum, t) => sum + expectedRecords(t), 0);
      visiting.delete(topic);
      total = Math.max(total, Math.round((total * inputs) / stage.done));
    }
    expected.set(topic, total);
    return total;
  };
  return stages.map((s) => s.topics.reduce((more, t) => more + expectedRecords(t) - records(t), 0));
}

/**
 * Shows a catch-up on `stream` (stderr): records every stage worked through since it began,
 * the share of this catch-up's work done (the whole grows as the engine's outputs give the
 * projections more), rate, the time left (time-left.ts) and the stage that sets it with its
 * own rate; redrawn on a terminal, a plain line every few seconds otherwise; one line when it
 * is done. Quiet while the service is caught up.
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
    const done = status.doneRecords - doneAtStart;
    const behind = status.stages.find((s) => s.name === status.mostBehind);
    const pace = behind?.ratePerSecond ? ` at ${formatCount(behind.ratePerSecond)}/s` : '';
    const note = `lag ${status.lagRecords}${behind ? `, most behind: ${behind.name}${pace}` : ''}`;
    const whole = done + status.remainingRecords;
    progress.update(done, whole > 0 ? done / whole : null, note, status.timeLeftSeconds);
  };
}
