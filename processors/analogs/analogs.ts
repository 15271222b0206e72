import { TOPICS } from '../../schemas/catalogue.ts';
import type { AnalogInputsRecord, MarketTick, OutcomeSubjectRecord, TokenMeta } from '../../schemas/records.ts';
import type { Signal, SignalAnalogs } from '../../schemas/records/quant-signals.ts';
import { createKeyedDedupeState, firstKeyedDelivery, type KeyedDedupeState } from '../dedupe.ts';
import { queryAnalogs } from '../quant-engine/analogs/analogs.ts';
import { analogInputs } from '../quant-engine/analogs/vector.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import { advanceOutcomes, createOutcomesState, latestTickTime, outcomesOnTick, outcomesOnTokenMeta, trackSubject, type OutcomesState } from '../quant-engine/outcomes/outcomes.ts';
import type { Processor, ProcessorContext } from '../runtime/processor.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../runtime/state/tables.ts';
import { scoresStage } from '../scores/scores.ts';
import { createStoredPool, poolOf, takeResolution, takeSnapshot, type StoredPool } from './stored-pool.ts';

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
  pool: StoredPool;
  /** Snapshot subjects only: the pool takes their 24 h outcomes. */
  outcomes: OutcomesState;
  /** Token id → place in the registry, as the engine's registry first saw it. */
  registryOrder: KeyedTable<number>;
  /** Under one key, what the stage has taken in so far (StageProgress). */
  progress: KeyedTable<StageProgress>;
  /** Summaries of the signals active now, by signal id, for their ended records. */
  activeSummaries: KeyedTable<SignalAnalogs | null>;
  repeatedDrafts: KeyedDedupeState;
}

interface StageProgress {
  /** Tokens in `registryOrder`. */
  registered: number;
  /** Subjects of the latest subject time by id, waiting to be tracked in registry order. */
  waiting: Record<string, OutcomeSubjectRecord>;
  waitingTs: number;
  /** Subjects up to this time are tracked: one at or before it is a repeat. */
  trackedThrough: number;
  /** Time of the latest snapshot vector taken in: an older one is a repeat. */
  latestSnapshotTs: number;
}

const PROGRESS_KEY = 'progress';

/** Neighbours asked of the analog model for a signal's summary. */
export const SIGNAL_ANALOGS_K = 40;
/**
 * How long a draft is remembered to drop its repeats: a crashed upstream repeats what it wrote
 * since its checkpoint, which during a catch-up may span days of event time (as public-events
 * remembers its inputs).
 */
const REPEATED_DRAFTS_WINDOW_MS = 30 * 24 * 3_600_000;

/** Every part per key or under a key of its own, so a task's store checkpoints only what changed. */
export function createAnalogsStageState(_partition = 0, tables: TableSource = IN_MEMORY_TABLES): AnalogsStageState {
  return {
    pool: createStoredPool(tables),
    outcomes: createOutcomesState(tables),
    registryOrder: tables.table('registry-order'),
    progress: tables.table('progress'),
    activeSummaries: tables.table('active-summaries'),
    repeatedDrafts: createKeyedDedupeState(REPEATED_DRAFTS_WINDOW_MS, tables, 'repeated-drafts'),
  };
}

function progressOf(state: AnalogsStageState): StageProgress {
  return state.progress.get(PROGRESS_KEY) ?? { registered: 0, waiting: {}, waitingTs: -Infinity, trackedThrough: -Infinity, latestSnapshotTs: -Infinity };
}

/** Tracks the waiting subjects, in the order the engine tracked them, once time has passed theirs. */
function trackWaiting(state: AnalogsStageState, t: number): void {
  const progress = progressOf(state);
  if (t <= progress.waitingTs) return;
  const waiting = Object.values(progress.waiting);
  if (waiting.length === 0) return;
  const order = (tokenId: string) => state.registryOrder.get(tokenId)!;
  for (const { kind, subjectId, tokenId, ts, entryPrice, entryLiquidity } of waiting.sort((a, b) => order(a.tokenId) - order(b.tokenId))) {
    trackSubject(state.outcomes, { kind, subjectId, tokenId, ts, entryPrice }, entryLiquidity);
  }
  progress.trackedThrough = progress.waitingTs;
  progress.waiting = {};
  state.progress.set(PROGRESS_KEY, progress);
}

function onTokenMeta(state: AnalogsStageState, meta: TokenMeta): void {
  if (!state.registryOrder.has(meta.tokenId)) {
    const progress = progressOf(state);
    state.registryOrder.set(meta.tokenId, progress.registered++);
    state.progress.set(PROGRESS_KEY, progress);
  }
  outcomesOnTokenMeta(state.outcomes, meta);
}

function onSubject(state: AnalogsStageState, subject: OutcomeSubjectRecord): void {
  const progress = progressOf(state);
  if (subject.kind !== 'snapshot' || subject.ts <= progress.trackedThrough) return;
  if (subject.ts < progress.waitingTs || subject.subjectId in progress.waiting) return; // a repeat
  progress.waitingTs = subject.ts;
  progress.waiting[subject.subjectId] = subject;
  state.progress.set(PROGRESS_KEY, progress);
}

function onAnalogInputs(state: AnalogsStageState, record: AnalogInputsRecord): void {
  const progress = progressOf(state);
  if (record.ts < progress.latestSnapshotTs) return; // a repeat; one at the latest time the pool drops itself
  progress.latestSnapshotTs = record.ts;
  state.progress.set(PROGRESS_KEY, progress);
  const { snapshotId, tokenId, ts, ...inputs } = record;
  takeSnapshot(state.pool, { snapshotId, tokenId, ts }, inputs);
}

function onDraft(state: AnalogsStageState, draft: Signal, ctx: ProcessorContext): void {
  if (!firstKeyedDelivery(state.repeatedDrafts, `${draft.signalId}@${draft.version}`, draft.ts)) return;
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

/**
 * A token's ticks come in time order, so one at or before its latest tick is a repeat (a tick
 * is known by its token and time); the engine drops the same ones with its window of keys.
 */
function onTick(state: AnalogsStageState, tick: MarketTick): void {
  if (tick.ts > latestTickTime(state.outcomes, tick.tokenId)) outcomesOnTick(state.outcomes, tick);
}

/** The summary of a firing's nearest analogs, or null when none had resolved. */
function summaryFor(state: AnalogsStageState, firing: Signal): SignalAnalogs | null {
  const { summary } = queryAnalogs(poolOf(state.pool), { tokenId: firing.tokenId, ts: firing.firedAt, inputs: analogInputs(firing) }, SIGNAL_ANALOGS_K);
  if (summary.n === 0) return null;
  const { n, median24h, worstDrawdown24h, positiveShare, confidence } = summary;
  return { n, median24h, worstDrawdown24h, positiveShare, confidence };
}

export const analogsStage: Processor<AnalogsStageState> = {
  name: 'analogs',
  // 3: the state is kept in tables (runtime/state), the pool's candidates in blocks.
  stateVersion: 4,
  keyedState: true,
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
    for (const resolution of advanceOutcomes(state.outcomes, record.timestamp)) takeResolution(state.pool, resolution);
    switch (record.topic) {
      case TOPICS.tokens.name:
        return onTokenMeta(state, record.value as TokenMeta);
      case TOPICS.market.name:
        return onTick(state, record.value as MarketTick);
      case TOPICS.outcomeSubjects.name:
        return onSubject(state, record.value as OutcomeSubjectRecord);
      case TOPICS.analogInputs.name:
        return onAnalogInputs(state, record.value as AnalogInputsRecord);
      case TOPICS.signalDrafts.name:
        return onDraft(state, record.value as Signal, ctx);
    }
  },
};
