import { TOPICS } from '../../schemas/catalogue.ts';
import type { MarketTick, OutcomeSubjectRecord, TokenMeta } from '../../schemas/records.ts';
import { createDedupeState, firstDelivery, type DedupeState } from '../dedupe.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import {
  advanceOutcomes,
  createOutcomesState,
  outcomesOnTick,
  outcomesOnTokenMeta,
  trackSubject,
  type OutcomesState,
} from '../quant-engine/outcomes/outcomes.ts';
import type { Processor } from '../runtime/processor.ts';

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
  /** Ids of the subjects tracked at the latest subject time: an engine that crashed repeats its outputs. */
  latestSubjectIds: string[];
  repeatedTicks: DedupeState;
}

export function createOutcomesStageState(): OutcomesStageState {
  // The tick window is the engine's, so a redelivered tick is dropped here exactly when there.
  return { outcomes: createOutcomesState(), latestSubjectIds: [], repeatedTicks: createDedupeState(3_600_000) };
}

function onSubject(state: OutcomesStageState, record: OutcomeSubjectRecord): void {
  const latest = state.outcomes.lastSubjectTs;
  // Subjects of a partition come in time order; an older one, or one seen at the latest time, is a repeat.
  if (record.ts < latest || (record.ts === latest && state.latestSubjectIds.includes(record.subjectId))) return;
  const { kind, subjectId, tokenId, ts, entryPrice, entryLiquidity } = record;
  trackSubject(state.outcomes, { kind, subjectId, tokenId, ts, entryPrice }, entryLiquidity);
  if (ts !== latest) state.latestSubjectIds = [];
  state.latestSubjectIds.push(subjectId);
}

function onTick(state: OutcomesStageState, tick: MarketTick): void {
  if (firstDelivery(state.repeatedTicks, `${tick.tokenId}@${tick.ts}`, tick.ts)) outcomesOnTick(state.outcomes, tick);
}

export const outcomesStage: Processor<OutcomesStageState> = {
  name: 'outcomes',
  stateVersion: 1,
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
