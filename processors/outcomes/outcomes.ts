import { TOPICS } from '../../schemas/catalogue.ts';
import type { MarketTick, OutcomeSubjectRecord, TokenMeta } from '../../schemas/records.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import {
  advanceOutcomes,
  createOutcomesState,
  lastSubjectTime,
  latestTickTime,
  outcomesOnTick,
  outcomesOnTokenMeta,
  trackSubject,
  type OutcomesState,
} from '../quant-engine/outcomes/outcomes.ts';
import type { Processor } from '../runtime/processor.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../runtime/state/tables.ts';

/**
 * The outcomes stage: the forward outcomes of every snapshot and call, per token. A token's
 * outcomes depend on its own subjects, ticks and status only, so the stage is keyed by token
 * and runs one task per partition; the engine keeps resolving calls itself (author metrics
 * need them) but no longer writes outcomes, which was half its output.
 *
 * Its subjects come from the engine, so a task reads them only as far as the engine has
 * finished (`upstreams`): it never handles a tick after a subject of an earlier time the
 * engine has yet to write, and resolves exactly what the single-task engine did. Within one
 * event time the order of subjects and ticks changes nothing: a subject's window starts
 * after its own time, and its entry liquidity is the engine's, carried on the record.
 */
export interface OutcomesStageState {
  outcomes: OutcomesState;
  /** Under one key, the ids of the subjects tracked at the latest subject time: an engine that crashed repeats its outputs. */
  latestSubjectIds: KeyedTable<string[]>;
}

const LATEST_KEY = 'latest';

/** Every part per token or under a key of its own, so a task's store checkpoints only what changed. */
export function createOutcomesStageState(_partition = 0, tables: TableSource = IN_MEMORY_TABLES): OutcomesStageState {
  return { outcomes: createOutcomesState(tables), latestSubjectIds: tables.table('latest-subject-ids') };
}

function onSubject(state: OutcomesStageState, record: OutcomeSubjectRecord): void {
  const latest = lastSubjectTime(state.outcomes);
  const latestIds = state.latestSubjectIds.get(LATEST_KEY) ?? [];
  // Subjects of a partition come in time order; an older one, or one seen at the latest time, is a repeat.
  if (record.ts < latest || (record.ts === latest && latestIds.includes(record.subjectId))) return;
  const { kind, subjectId, tokenId, ts, entryPrice, entryLiquidity } = record;
  trackSubject(state.outcomes, { kind, subjectId, tokenId, ts, entryPrice }, entryLiquidity);
  state.latestSubjectIds.set(LATEST_KEY, ts === latest ? [...latestIds, subjectId] : [subjectId]);
}

/**
 * A token's ticks come in time order, so one at or before its latest tick is a repeat (a tick
 * is known by its token and time); the engine drops the same ones with its window of keys.
 */
function onTick(state: OutcomesStageState, tick: MarketTick): void {
  if (tick.ts > latestTickTime(state.outcomes, tick.tokenId)) outcomesOnTick(state.outcomes, tick);
}

export const outcomesStage: Processor<OutcomesStageState> = {
  name: 'outcomes',
  // 2: the state is kept per token and in blocks of subjects, in tables (runtime/state).
  stateVersion: 3,
  keyedState: true,
  parallelism: 'partition',
  inputs: [TOPICS.tokens.name, TOPICS.outcomeSubjects.name, TOPICS.market.name],
  upstreams: [quantEngine],
  outputs: [TOPICS.outcomes.name],
  allowedLatenessMs: 0,
  createState: createOutcomesStageState,
  process(state, record, ctx) {
    if (record.value === null) return; // a compaction tombstone carries no event
    advanceOutcomes(state.outcomes, record.timestamp, ctx);
    switch (record.topic) {
      case TOPICS.tokens.name:
        return outcomesOnTokenMeta(state.outcomes, record.value as TokenMeta);
      case TOPICS.outcomeSubjects.name:
        return onSubject(state, record.value as OutcomeSubjectRecord);
      case TOPICS.market.name:
        return onTick(state, record.value as MarketTick);
    }
  },
};
