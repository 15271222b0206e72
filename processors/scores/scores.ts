import { TOPICS } from '../../schemas/catalogue.ts';
import type { FeatureSnapshot, ScoreInputsRecord } from '../../schemas/records.ts';
import { analogInputs } from '../quant-engine/analogs/vector.ts';
import { quantEngine } from '../quant-engine/engine.ts';
import { scoreSnapshot, type ScoreContext } from '../quant-engine/scores/scores.ts';
import { activeSignalsLookup, createSignalsState, evaluateSignals, type SignalsState } from '../quant-engine/signals/signals.ts';
import { emitSnapshot } from '../quant-engine/snapshots/snapshots.ts';
import type { Processor, ProcessorContext } from '../runtime/processor.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../runtime/state/tables.ts';

/**
 * The scores stage: the token side of the quant engine that needs nothing but the token's own
 * snapshots. It scores each feature snapshot, fires and ends the token's signals (as drafts,
 * which the analogs stage completes), writes the quant snapshot and, for a snapshot whose
 * outcomes the engine tracks, its analog vector. Keyed by token, one task per partition.
 *
 * The engine builds the feature snapshots, which need the social modules (author quality,
 * narrative shares), and writes beside each what its scores join from them as of its time
 * (`quant.score-inputs`: the smart cohort's activity on the token, the narrative's share
 * change, whether it tracks the outcomes). This stage pairs the two records by snapshot id,
 * in whichever order they arrive, and works in the order the pairs complete, which is the
 * engine's order, since the engine writes both per snapshot in one order.
 *
 * A signal's end depends on the token's own snapshots and the passing of time, so a task that
 * sweeps only its partition's tokens writes the same records per partition as the single
 * engine did: an end is written before the first later snapshot of its partition in both.
 */
export interface ScoresStageState {
  signals: SignalsState;
  /** Token id → the half of its latest snapshot's pair that has arrived. */
  pending: KeyedTable<{ snapshotId: string; feature?: FeatureSnapshot; inputs?: ScoreInputsRecord }>;
  /** Token id → time of its latest scored snapshot: a record at or before it is a repeat. */
  scoredThrough: KeyedTable<number>;
}

/** Every part per token (or per rule and token), so a task's store checkpoints only the tokens changed. */
export function createScoresStageState(_partition = 0, tables: TableSource = IN_MEMORY_TABLES): ScoresStageState {
  return { signals: createSignalsState(tables), pending: tables.table('pending'), scoredThrough: tables.table('scored-through') };
}

function onHalf(state: ScoresStageState, half: { feature: FeatureSnapshot } | { inputs: ScoreInputsRecord }, ctx: ProcessorContext): void {
  const { snapshotId, tokenId, ts } = 'feature' in half ? half.feature : half.inputs;
  // An engine that crashed repeats what it wrote since its checkpoint; a token's snapshots come in time order.
  if (ts <= (state.scoredThrough.get(tokenId) ?? -Infinity)) return;
  const held = state.pending.get(tokenId);
  const pair = { ...(held?.snapshotId === snapshotId ? held : { snapshotId }), ...half };
  if (!pair.feature || !pair.inputs) {
    state.pending.set(tokenId, pair);
    return;
  }
  state.pending.delete(tokenId);
  state.scoredThrough.set(tokenId, ts);
  score(state, pair.feature, pair.inputs, ctx);
}

function score(state: ScoresStageState, feature: FeatureSnapshot, joined: ScoreInputsRecord, ctx: ProcessorContext): void {
  const activity = { mentions24h: joined.smartCohortMentions24h, members24h: joined.smartCohortMembers24h, cohortSize: joined.smartCohortSize };
  // The joined values are this snapshot's own: the lookups are asked of its token and narrative only.
  const joins: ScoreContext = {
    smartCohort: { activity: () => activity },
    narratives: { attentionShareChange24h: () => joined.narrativeShareChange24h },
  };
  const scored = scoreSnapshot(feature, joins);
  evaluateSignals(state.signals, scored, ctx);
  // The stream carries no analog summary per snapshot; the API computes it on request.
  emitSnapshot(scored, feature, activeSignalsLookup(state.signals).active(scored.tokenId), null, ctx);
  if (!joined.outcomeTracked) return;
  // Only a snapshot whose outcomes are tracked can become an analog.
  const { snapshotId, tokenId, ts } = scored;
  ctx.emit({ topic: TOPICS.analogInputs.name, key: tokenId, value: { snapshotId, tokenId, ts, ...analogInputs(scored) }, timestamp: ts });
}

export const scoresStage: Processor<ScoresStageState> = {
  name: 'scores',
  // 2: the state is kept per token in tables (runtime/state), the active signals as lists.
  stateVersion: 2,
  keyedState: true,
  parallelism: 'partition',
  inputs: [TOPICS.features.name, TOPICS.scoreInputs.name],
  upstreams: [quantEngine],
  outputs: [TOPICS.snapshots.name, TOPICS.snapshotsLatest.name, TOPICS.signalDrafts.name, TOPICS.analogInputs.name],
  allowedLatenessMs: 0,
  createState: createScoresStageState,
  process(state, record, ctx) {
    if (record.value === null) return; // a compaction tombstone carries no event
    if (record.topic === TOPICS.features.name) onHalf(state, { feature: record.value as FeatureSnapshot }, ctx);
    else onHalf(state, { inputs: record.value as ScoreInputsRecord }, ctx);
  },
};
