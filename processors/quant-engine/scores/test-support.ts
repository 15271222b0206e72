import { Simulator } from '../../../infra/feeds/sim/engine.ts';
import { deterministicId } from '../../runtime/runtime.ts';
import type { OutputRecord } from '../../runtime/processor.ts';
import { TOPICS } from '../../../schemas/catalogue.ts';
import type { MarketTick, Mention, NarrativeBucket, Post, TokenMeta } from '../../../schemas/records.ts';
import type { FeatureSnapshot } from '../../../schemas/records/quant-market.ts';
import { cohortSize, isMember, TOP_RESEARCH_ID } from '../cohorts/cohorts.ts';
import type { Emitter, ScoredSnapshot } from '../contracts.ts';
import { advanceEngine, applyPost, applyTick, applyTokenMetaEvent, createEngineState } from '../engine.ts';
import { scoreSnapshot, type NarrativeShareChangeLookup } from './scores.ts';
import { createSmartCohortState, smartCohortLookup, smartMoneyOnMention } from './smart-cohort.ts';

/**
 * A simulated history run through the engine's modules with scoring wired the way the
 * engine is meant to: each mention feeds the smart-cohort state with its author's
 * membership as of then; each feature snapshot is scored as soon as it is emitted.
 */
export interface ScoredHistory {
  pairs: { feature: FeatureSnapshot; scored: ScoredSnapshot }[];
  maxCohortSize: number;
}

export function scoredHistory(opts: { seed: number; tokens: number; authors: number; days: number }): ScoredHistory {
  const sim = Simulator.start({ seed: opts.seed, tokens: opts.tokens, authors: opts.authors, startMs: Date.UTC(2026, 2, 2) });
  const state = createEngineState();
  const smart = createSmartCohortState();
  const shareChange = new Map<string, number | null>();
  const narratives: NarrativeShareChangeLookup = { attentionShareChange24h: (n) => shareChange.get(n) ?? null };
  const ctx = { smartCohort: smartCohortLookup(smart, () => cohortSize(state.cohorts, TOP_RESEARCH_ID)), narratives };
  const pending: OutputRecord[] = [];
  const emitter: Emitter = { emit: (o) => pending.push(o), id: deterministicId };
  const history: ScoredHistory = { pairs: [], maxCohortSize: 0 };

  const drain = () => {
    for (const o of pending.splice(0)) {
      if (o.topic === TOPICS.features.name) {
        const feature = o.value as FeatureSnapshot;
        history.pairs.push({ feature, scored: scoreSnapshot(feature, ctx) });
      } else if (o.topic === TOPICS.mentions.name) {
        const m = o.value as Mention;
        smartMoneyOnMention(smart, m, isMember(state.cohorts, TOP_RESEARCH_ID, m.authorId));
      } else if (o.topic === TOPICS.narratives.name) {
        const b = o.value as NarrativeBucket;
        shareChange.set(b.narrative, b.attentionShareChange24h);
      }
    }
  };

  const end = sim.clockMs + opts.days * 86_400_000;
  while (sim.clockMs < end) {
    for (const r of sim.step()) {
      advanceEngine(state, r.timestamp, emitter);
      drain();
      if (r.topic === TOPICS.tokens.name) applyTokenMetaEvent(state, r.value as TokenMeta);
      else if (r.topic === TOPICS.posts.name) applyPost(state, r.value as Post, emitter);
      else applyTick(state, r.value as MarketTick);
      drain();
      history.maxCohortSize = Math.max(history.maxCohortSize, cohortSize(state.cohorts, TOP_RESEARCH_ID));
    }
  }
  return history;
}
