import { TOPICS } from '../../schemas/catalogue.ts';
import type { CohortCommand, MarketTick, Post, ScoreInputsRecord, TokenMeta } from '../../schemas/records.ts';
import type { InputRecord, Processor } from '../runtime/processor.ts';
import { IN_MEMORY_TABLES, type TableSource } from '../runtime/state/tables.ts';
import * as authors from './authors/authors.ts';
import * as cohorts from './cohorts/cohorts.ts';
import type { AuthorQualityLookup, Emitter, NarrativeShareLookup, OutcomeSubject, PriceLookup, TokenLookup } from './contracts.ts';
import { createFeaturesState, featuresOnMention, featuresOnTick, featuresPriceLookup, nextSnapshotTime, snapshotsAt } from './features/features.ts';
import { createGroupedDedupeState, firstGroupedDelivery, type GroupedDedupeState } from '../dedupe.ts';
import { createMentionsState, mentionsFromPost } from './mentions/mentions.ts';
import * as narratives from './narratives/narratives.ts';
import { admitSubject, advanceOutcomes, createOutcomesState, latestLiquidity, outcomesOnTick, outcomesOnTokenMeta, trackSubject } from './outcomes/outcomes.ts';
import type { NarrativeShareChangeLookup } from './scores/scores.ts';
import { createSmartCohortState, smartCohortLookup, smartMoneyOnMention, type SmartCohortLookup } from './scores/smart-cohort.ts';
import { applyTokenMeta, createTokensState, tokenLookup } from './tokens/registry.ts';

/**
 * The state of every module, each kept in tables (runtime/state/tables.ts) of its own: a
 * checkpoint of the engine's store writes only the keys the records since the last one changed.
 */
export interface EngineState {
  tokens: ReturnType<typeof createTokensState>;
  mentions: ReturnType<typeof createMentionsState>;
  features: ReturnType<typeof createFeaturesState>;
  outcomes: ReturnType<typeof createOutcomesState>;
  authors: ReturnType<typeof authors.createAuthorsState>;
  cohorts: ReturnType<typeof cohorts.createCohortsState>;
  narratives: ReturnType<typeof narratives.createNarrativesState>;
  smartCohort: ReturnType<typeof createSmartCohortState>;
  /** Post ids by author, 48 h. */
  repeatedPosts: GroupedDedupeState;
  /** Tick times by token, 1 h. */
  repeatedTicks: GroupedDedupeState;
}

export function createEngineState(tables: TableSource = IN_MEMORY_TABLES): EngineState {
  return {
    tokens: createTokensState(tables),
    mentions: createMentionsState(tables),
    features: createFeaturesState(tables),
    outcomes: createOutcomesState(tables),
    authors: authors.createAuthorsState(tables),
    cohorts: cohorts.createCohortsState(tables),
    narratives: narratives.createNarrativesState(tables),
    smartCohort: createSmartCohortState(tables),
    repeatedPosts: createGroupedDedupeState(48 * 3_600_000, tables, 'repeated-posts'),
    repeatedTicks: createGroupedDedupeState(3_600_000, tables, 'repeated-ticks'),
  };
}

/** Read views one module offers the others; views over the state, so made once per state object. */
interface Views {
  tokens: TokenLookup;
  prices: PriceLookup;
  quality: AuthorQualityLookup;
  shares: NarrativeShareLookup;
  directory: authors.AuthorDirectory;
  crowd: authors.CrowdLookup;
  shareChanges: NarrativeShareChangeLookup;
  smartCohort: SmartCohortLookup;
}
const viewsByState = new WeakMap<EngineState, Views>();

function views(state: EngineState): Views {
  let v = viewsByState.get(state);
  if (!v) {
    v = {
      tokens: tokenLookup(state.tokens),
      prices: featuresPriceLookup(state.features),
      quality: authors.authorQuality(state.authors),
      shares: narratives.narrativeShares(state.narratives),
      directory: authors.authorDirectory(state.authors),
      crowd: authors.crowdLookup(state.authors),
      shareChanges: narratives.narrativeShareChanges(state.narratives),
      smartCohort: smartCohortLookup(state.smartCohort, () => cohorts.cohortSize(state.cohorts, cohorts.TOP_RESEARCH_ID)),
    };
    viewsByState.set(state, v);
  }
  return v;
}

/**
 * Does everything due strictly before event time `t`, before an event at `t` is applied:
 * for each grid time b passed, what the other modules have due by b (advanceJoined), then
 * the feature snapshots of b (built from events up to b only), each with what scoring it
 * joins from the social modules as of b (the scores stage scores it, fires signals and
 * writes the quant snapshot); then what those modules have due by t.
 */
export function advanceEngine(state: EngineState, t: number, emitter: Emitter): void {
  const v = views(state);
  for (let b = nextSnapshotTime(state.features, t); b !== null; b = nextSnapshotTime(state.features, t)) {
    // The snapshots of grid time b join the other modules as of b, not as of the last event
    // before it: what is due by b (outcomes, author versions, cohorts, narrative buckets) first.
    advanceJoined(state, b, emitter);
    for (const snapshot of snapshotsAt(state.features, b, emitter, v.tokens, v.quality, v.shares)) {
      const { snapshotId, tokenId, ts, priceUsd } = snapshot;
      // Nothing to measure a forward return from without a price.
      const outcomeTracked = priceUsd !== null && track(state, { kind: 'snapshot', subjectId: snapshotId, tokenId, ts, entryPrice: priceUsd }, emitter);
      const smart = v.smartCohort.activity(tokenId, ts);
      const value: ScoreInputsRecord = {
        snapshotId,
        tokenId,
        ts,
        smartCohortMentions24h: smart.mentions24h,
        smartCohortMembers24h: smart.members24h,
        smartCohortSize: smart.cohortSize,
        narrativeShareChange24h: v.shareChanges.attentionShareChange24h(snapshot.narrative),
        outcomeTracked,
      };
      emitter.emit({ topic: TOPICS.scoreInputs.name, key: tokenId, value, timestamp: ts });
    }
  }
  advanceJoined(state, t, emitter);
}

/**
 * Everything due before time t in the modules a snapshot joins: outcomes whose horizon passed
 * (feeding author metrics; the outcomes stage writes them), author metrics of the hour begun,
 * cohort recomputes, narrative buckets.
 */
function advanceJoined(state: EngineState, t: number, emitter: Emitter): void {
  const v = views(state);
  // The outcomes stage emits the outcome records; the engine needs the resolutions themselves.
  for (const resolution of advanceOutcomes(state.outcomes, t)) authors.onOutcome(state.authors, resolution);
  authors.advanceTo(state.authors, t, emitter);
  cohorts.advanceTo(state.cohorts, t, emitter, v.directory);
  narratives.advanceTo(state.narratives, t, emitter, v.tokens);
}

/**
 * Hands a subject to the outcomes stage, which measures and emits its outcomes per token, with
 * the entry liquidity seen here. A call's outcomes are also tracked here, for author metrics;
 * a snapshot's only the analogs stage needs, which resolves them itself. False when refused
 * (older than one tracked before).
 */
function track(state: EngineState, subject: OutcomeSubject, emitter: Emitter): boolean {
  const entryLiquidity = latestLiquidity(state.outcomes, subject.tokenId);
  const tracked = subject.kind === 'call' ? trackSubject(state.outcomes, subject, entryLiquidity) : admitSubject(state.outcomes, subject.ts);
  if (!tracked) return false;
  const { kind, subjectId, tokenId, ts, entryPrice } = subject;
  emitter.emit({ topic: TOPICS.outcomeSubjects.name, key: tokenId, value: { kind, subjectId, tokenId, ts, entryPrice, entryLiquidity }, timestamp: ts });
  return true;
}

export function applyTokenMetaEvent(state: EngineState, meta: TokenMeta): void {
  applyTokenMeta(state.tokens, meta);
  outcomesOnTokenMeta(state.outcomes, meta);
}

export function applyTick(state: EngineState, tick: MarketTick): void {
  if (!firstGroupedDelivery(state.repeatedTicks, tick.tokenId, String(tick.ts), tick.ts)) return;
  featuresOnTick(state.features, tick);
  outcomesOnTick(state.outcomes, tick);
}

export function applyPost(state: EngineState, post: Post, emitter: Emitter): void {
  if (!firstGroupedDelivery(state.repeatedPosts, post.authorId, post.postId, post.ts)) return;
  const v = views(state);
  for (const mention of mentionsFromPost(state.mentions, state.tokens, post, emitter)) {
    featuresOnMention(state.features, mention);
    smartMoneyOnMention(state.smartCohort, mention, cohorts.isMember(state.cohorts, cohorts.TOP_RESEARCH_ID, mention.authorId));
    const call = authors.onMention(state.authors, mention, emitter, v.tokens, v.prices);
    if (call) track(state, call, emitter);
    // After the authors module, so the crowd count includes this mention.
    cohorts.onMention(state.cohorts, mention, emitter, v.directory, v.crowd);
    narratives.onMention(state.narratives, mention, v.tokens);
  }
}

/** Applies a manual-cohort command; returns why it was refused, or null. */
export function applyCohortCommand(state: EngineState, command: CohortCommand, emitter: Emitter): string | null {
  const result = cohorts.onCommand(state.cohorts, command, emitter, views(state).directory);
  return result.applied ? null : `cohort command refused: ${result.reason}`;
}

/**
 * The quant engine as one processor with a single task: every module sees the one
 * event-time order of all inputs, so joins between modules are point-in-time by
 * construction. Token metadata and control commands come first among equal times.
 */
export const quantEngine: Processor<EngineState> = {
  name: 'quant-engine',
  // 5: the outcome records moved to the outcomes stage, which needs every subject from the start.
  // 6: snapshots join the other modules as of their grid time (features@2): replayed from 0.
  // 7: the analog pool moved to the analogs stage, which needs every snapshot from the start.
  // 8: scores, signals and quant snapshots moved to the scores stage, which needs every feature snapshot.
  // 9: the outcomes module keeps its subjects in blocks, in tables.
  // 10: every module keeps its state in tables, in the task's store: checkpoints write the keys changed.
  // 11: the features keep a token's ticks in blocks by hour, apart from its windows.
  stateVersion: 12,
  keyedState: true,
  parallelism: 'single',
  inputs: [TOPICS.tokens.name, TOPICS.cohortCommands.name, TOPICS.posts.name, TOPICS.market.name],
  outputs: [
    TOPICS.mentions.name,
    TOPICS.unresolvedRefs.name,
    TOPICS.features.name,
    TOPICS.scoreInputs.name,
    TOPICS.outcomeSubjects.name,
    TOPICS.calls.name,
    TOPICS.authorMetrics.name,
    TOPICS.cohorts.name,
    TOPICS.cohortEvents.name,
    TOPICS.narratives.name,
  ],
  allowedLatenessMs: 0,
  createState: (_partition, tables) => createEngineState(tables),
  process(state, record: InputRecord, ctx) {
    if (record.value === null) return; // a compaction tombstone carries no event
    advanceEngine(state, record.timestamp, ctx);
    switch (record.topic) {
      case TOPICS.tokens.name:
        return applyTokenMetaEvent(state, record.value as TokenMeta);
      case TOPICS.cohortCommands.name: {
        const refused = applyCohortCommand(state, record.value as CohortCommand, ctx);
        if (refused) ctx.reject(refused); // the snapshots and outcomes advanced to here stay
        return;
      }
      case TOPICS.posts.name:
        return applyPost(state, record.value as Post, ctx);
      case TOPICS.market.name:
        return applyTick(state, record.value as MarketTick);
    }
  },
};
