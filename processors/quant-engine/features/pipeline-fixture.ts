import type { MarketTick, Post, TokenMeta } from '../../../schemas/records.ts';
import type { FeatureSnapshot } from '../../../schemas/records/quant-market.ts';
import type { AuthorQualityLookup, NarrativeShareLookup, OutcomeResolution, TokenLookup } from '../contracts.ts';
import { createMentionsState, mentionsFromPost, type MentionsState } from '../mentions/mentions.ts';
import {
  advanceOutcomes,
  createOutcomesState,
  outcomesOnTick,
  outcomesOnTokenMeta,
  trackSubject,
  type OutcomesState,
} from '../outcomes/outcomes.ts';
import { recordingEmitter, type RecordingEmitter } from '../tokens/fixtures.ts';
import { applyTokenMeta, createTokensState, tokenLookup, type TokensState } from '../tokens/registry.ts';
import { createFeaturesState, featuresOnMention, featuresOnTick, nextSnapshotTime, snapshotsAt, type FeaturesState } from './features.ts';

/**
 * The tokens, mentions, features and outcomes modules wired in the order the engine runs
 * them, for tests: before each event, emit the snapshots due, track them as outcome subjects
 * and resolve the outcomes due; then apply the event.
 */

export type WorldEvent = { kind: 'meta'; value: TokenMeta } | { kind: 'post'; value: Post } | { kind: 'tick'; value: MarketTick };

export interface Pipeline {
  tokens: TokensState;
  mentions: MentionsState;
  features: FeaturesState;
  outcomes: OutcomesState;
  emitter: RecordingEmitter;
  quality: AuthorQualityLookup;
  narratives: NarrativeShareLookup;
  snapshots: FeatureSnapshot[];
  resolutions: OutcomeResolution[];
}

export function createPipeline(
  quality: AuthorQualityLookup = { researchScore: () => null },
  narratives: NarrativeShareLookup = { attentionShare: () => null },
): Pipeline {
  return {
    tokens: createTokensState(),
    mentions: createMentionsState(),
    features: createFeaturesState(),
    outcomes: createOutcomesState(),
    emitter: recordingEmitter(),
    quality,
    narratives,
    snapshots: [],
    resolutions: [],
  };
}

/** One lookup per registry state, as the engine keeps it (a restored checkpoint is a new state). */
const lookups = new WeakMap<TokensState, TokenLookup>();

/** Everything due strictly before `t`. */
export function advance(p: Pipeline, t: number): void {
  let tokens = lookups.get(p.tokens);
  if (!tokens) lookups.set(p.tokens, (tokens = tokenLookup(p.tokens)));
  for (let b = nextSnapshotTime(p.features, t); b !== null; b = nextSnapshotTime(p.features, t)) {
    for (const s of snapshotsAt(p.features, b, p.emitter, tokens, p.quality, p.narratives)) {
      p.snapshots.push(s);
      if (s.priceUsd !== null) {
        trackSubject(p.outcomes, { kind: 'snapshot', subjectId: s.snapshotId, tokenId: s.tokenId, ts: s.ts, entryPrice: s.priceUsd });
      }
    }
  }
  p.resolutions.push(...advanceOutcomes(p.outcomes, t, p.emitter));
}

export function feed(p: Pipeline, event: WorldEvent): void {
  advance(p, event.value.ts);
  switch (event.kind) {
    case 'meta':
      applyTokenMeta(p.tokens, event.value);
      outcomesOnTokenMeta(p.outcomes, event.value);
      break;
    case 'post':
      for (const m of mentionsFromPost(p.mentions, p.tokens, event.value, p.emitter)) featuresOnMention(p.features, m);
      break;
    case 'tick':
      featuresOnTick(p.features, event.value);
      outcomesOnTick(p.outcomes, event.value);
      break;
  }
}
