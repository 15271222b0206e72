import { TOPICS } from '../../schemas/catalogue.ts';
import type { AnalogInputsRecord, MarketTick, OutcomeSubjectRecord, TokenMeta } from '../../schemas/records.ts';
import type { Signal, SignalAnalogs } from '../../schemas/records/quant-signals.ts';
import { createDedupeState, firstDelivery, type DedupeState } from '../dedupe.ts';
import { createAnalogsState, onResolution, onSnapshot, queryAnalogs, type AnalogsState } from '../quant-engine/analogs/analogs.ts';
import { analogInputs } from '../quant-engine/analogs/vector.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import { advanceOutcomes, createOutcomesState, outcomesOnTick, outcomesOnTokenMeta, trackSubject, type OutcomesState } from '../quant-engine/outcomes/outcomes.ts';
import type { Processor, ProcessorContext } from '../runtime/processor.ts';
import { scoresStage } from '../scores/scores.ts';

/**
 * The analogs stage: the analog pool (model analog-v1.0) of every token's snapshots and their
 * 24 h outcomes, and the one thing it is read for, the summary a signal carries when it fires.
 * The scores stage fires and ends signals without reading the pool and writes them as drafts;
 * this stage fills each firing's summary in (an ended record copies its firing's) and writes
 * `quant.signals`. So no token's processing waits for the pool, which is global.
 *
 * It answers as the engine's pool did. A firing at grid time g asks the pool holding every
 * snapshot outcome resolved before g: the stage reads the subjects and drafts behind the
 * engine and the scores stage (`upstreams`), so by a draft at g every subject before g is in
 * hand, and it resolves them
 * from the ticks itself, as the engine did. The pool is refitted at candidate counts, so
 * candidates must come in the engine's order: by resolution time, then horizon, then the
 * order the subjects were tracked, which within one grid time is the token registry's (the
 * order tokens were first registered, `snapshotsAt` walks it). Subjects of one time may come
 * from the log's partitions in any order, so they wait here until a later time and are then
 * tracked in the registry's order. Only a tracked snapshot can become a candidate, and the
 * scores stage writes the scores and features its vector is made of for each tracked one
 * (`quant.analog-inputs`: a few numbers, where a whole quant snapshot cost ten times as much
 * to read). A firing carries its own query: its token, time, scores and features are those
 * of the snapshot it fired on.
 */
export interface AnalogsStageState {
  pool: AnalogsState;
  /** Snapshot subjects only: the pool takes their 24 h outcomes. */
  outcomes: OutcomesState;
  /** Token id → place in the registry, as the engine's registry first saw it. */
  registryOrder: Map<string, number>;
  /** Subjects of the latest subject time by id, waiting to be tracked in registry order. */
  waiting: Map<string, OutcomeSubjectRecord>;
  waitingTs: number;
  /** Subjects up to this time are tracked: one at or before it is a repeat. */
  trackedThrough: number;
  /** Time of the latest snapshot vector taken in: an older one is a repeat. */
  latestSnapshotTs: number;
  /** Summaries of the signals active now, by signal id, for their ended records. */
  activeSummaries: Map<string, SignalAnalogs | null>;
  repeatedDrafts: DedupeState;
  repeatedTicks: DedupeState;
}

/** Neighbours asked of the analog model for a signal's summary. */
export const SIGNAL_ANALOGS_K = 40;
/**
 * How long a draft is remembered to drop its repeats: a crashed upstream repeats what it wrote
 * since its checkpoint, which during a catch-up may span days of event time (as public-events
 * remembers its inputs).
 */
const REPEATED_DRAFTS_WINDOW_MS = 30 * 24 * 3_600_000;

export function createAnalogsStageState(): AnalogsStageState {
  return {
    pool: createAnalogsState(),
    outcomes: createOutcomesState(),
    registryOrder: new Map(),
    waiting: new Map(),
    waitingTs: -Infinity,
    trackedThrough: -Infinity,
    latestSnapshotTs: -Infinity,
    activeSummaries: new Map(),
    repeatedDrafts: createDedupeState(REPEATED_DRAFTS_WINDOW_MS),
    // The tick window is the engine's, so a redelivered tick is dropped here exactly when there.
    repeatedTicks: createDedupeState(3_600_000),
  };
}

/** Tracks the waiting subjects, in the order the engine tracked them, once time has passed theirs. */
function trackWaiting(state: AnalogsStageState, t: number): void {
  if (t <= state.waitingTs || state.waiting.size === 0) return;
  const order = state.registryOrder;
  const inRegistryOrder = [...state.waiting.values()].sort((a, b) => order.get(a.tokenId)! - order.get(b.tokenId)!);
  for (const { kind, subjectId, tokenId, ts, entryPrice, entryLiquidity } of inRegistryOrder) {
    trackSubject(state.outcomes, { kind, subjectId, tokenId, ts, entryPrice }, entryLiquidity);
  }
  state.trackedThrough = state.waitingTs;
  state.waiting.clear();
}

function onTokenMeta(state: AnalogsStageState, meta: TokenMeta): void {
  if (!state.registryOrder.has(meta.tokenId)) state.registryOrder.set(meta.tokenId, state.registryOrder.size);
  outcomesOnTokenMeta(state.outcomes, meta);
}

function onSubject(state: AnalogsStageState, subject: OutcomeSubjectRecord): void {
  if (subject.kind !== 'snapshot' || subject.ts <= state.trackedThrough) return;
  if (subject.ts < state.waitingTs || state.waiting.has(subject.subjectId)) return; // a repeat
  state.waitingTs = subject.ts;
  state.waiting.set(subject.subjectId, subject);
}

function onAnalogInputs(state: AnalogsStageState, record: AnalogInputsRecord): void {
  if (record.ts < state.latestSnapshotTs) return; // a repeat; one at the latest time the pool drops itself
  state.latestSnapshotTs = record.ts;
  const { snapshotId, tokenId, ts, ...inputs } = record;
  onSnapshot(state.pool, { snapshotId, tokenId, ts }, inputs);
}

function onDraft(state: AnalogsStageState, draft: Signal, ctx: ProcessorContext): void {
  if (!firstDelivery(state.repeatedDrafts, `${draft.signalId}@${draft.version}`, draft.ts)) return;
  let analogs: SignalAnalogs | null;
  if (draft.status === 'active') {
    analogs = summaryFor(state, draft);
    state.activeSummaries.set(draft.signalId, analogs);
  } else {
    analogs = state.activeSummaries.get(draft.signalId) ?? null;
    state.activeSummaries.delete(draft.signalId);
  }
  ctx.emit({ topic: TOPICS.signals.name, key: draft.tokenId, value: { ...draft, analogs }, timestamp: draft.ts });
}

/** The summary of a firing's nearest analogs, or null when none had resolved. */
function summaryFor(state: AnalogsStageState, firing: Signal): SignalAnalogs | null {
  const { summary } = queryAnalogs(state.pool, { tokenId: firing.tokenId, ts: firing.firedAt, inputs: analogInputs(firing) }, SIGNAL_ANALOGS_K);
  if (summary.n === 0) return null;
  const { n, median24h, worstDrawdown24h, positiveShare, confidence } = summary;
  return { n, median24h, worstDrawdown24h, positiveShare, confidence };
}

export const analogsStage: Processor<AnalogsStageState> = {
  name: 'analogs',
  // 2: the outcomes module keeps its subjects in blocks, in tables.
  stateVersion: 2,
  // The pool is one over every token: one task reads every partition.
  parallelism: 'single',
  inputs: [TOPICS.tokens.name, TOPICS.market.name, TOPICS.outcomeSubjects.name, TOPICS.analogInputs.name, TOPICS.signalDrafts.name],
  // Subjects come from the engine; vectors and drafts from the scores stage, which follows it.
  upstreams: [quantEngine, scoresStage],
  outputs: [TOPICS.signals.name],
  allowedLatenessMs: 0,
  createState: createAnalogsStageState,
  process(state, record, ctx) {
    if (record.value === null) return; // a compaction tombstone carries no event
    trackWaiting(state, record.timestamp);
    for (const resolution of advanceOutcomes(state.outcomes, record.timestamp)) onResolution(state.pool, resolution);
    switch (record.topic) {
      case TOPICS.tokens.name:
        return onTokenMeta(state, record.value as TokenMeta);
      case TOPICS.market.name: {
        const tick = record.value as MarketTick;
        if (firstDelivery(state.repeatedTicks, `${tick.tokenId}@${tick.ts}`, tick.ts)) outcomesOnTick(state.outcomes, tick);
        return;
      }
      case TOPICS.outcomeSubjects.name:
        return onSubject(state, record.value as OutcomeSubjectRecord);
      case TOPICS.analogInputs.name:
        return onAnalogInputs(state, record.value as AnalogInputsRecord);
      case TOPICS.signalDrafts.name:
        return onDraft(state, record.value as Signal, ctx);
    }
  },
};
