import type { FeatureSnapshot } from '../../../schemas/records/quant-market.ts';
import { TOP_RESEARCH_SIZE } from '../cohorts/cohorts.ts';
import {
  SCORE_NAMES,
  type Confidence,
  type DivergenceState,
  type ScoreDetail,
  type ScoreDriver,
  type ScoredSnapshot,
  type ScoreName,
  type ScoreValues,
} from '../contracts.ts';
import type { FeatureName } from '../features/definitions.ts';
import { SCALES as S, SCORE_MODELS, SCORE_STEP, type ScoreDriverDoc, type ScoreModelDoc } from './models.ts';
import type { SmartCohortLookup } from './smart-cohort.ts';

/**
 * Scores of a feature snapshot: seven 0–100 values, each with drivers that sum to it
 * exactly, a confidence and the model version (definitions in models.ts). Pure: the
 * snapshot and the lookups as of its time are all it reads.
 */

/** Side input the narratives module provides as of the snapshot's time. */
export interface NarrativeShareChangeLookup {
  /**
   * The narrative's attention share over the last 24 closed hours minus that over the 24
   * before, in share points (-1..1); null before 48 hours of history.
   */
  attentionShareChange24h(narrative: string): number | null;
}

export interface ScoreContext {
  smartCohort: SmartCohortLookup;
  narratives: NarrativeShareChangeLookup;
}

export function scoreSnapshot(snapshot: FeatureSnapshot, ctx: ScoreContext): ScoredSnapshot {
  const inputs = new Inputs(snapshot);
  const details: ScoreDetail[] = [];
  const scores = {} as ScoreValues;
  let divergence: Gap | null = null;
  for (const name of SCORE_NAMES) {
    const outcome = evaluate(MODELS[name], inputs, snapshot, ctx);
    if ('gap' in outcome && outcome.gap) divergence = outcome.gap;
    const detail = compose(SCORE_MODELS[name], outcome);
    scores[name] = detail.value;
    details.push(detail);
  }
  return {
    snapshotId: snapshot.snapshotId,
    tokenId: snapshot.tokenId,
    ts: snapshot.ts,
    features: snapshot.features,
    scores,
    details,
    divergenceState: divergenceState(divergence),
  };
}

// ---- the models --------------------------------------------------------------------

/** Social acceleration and price move as strengths in -1..1, for the divergence state. */
interface Gap {
  social: number;
  price: number;
}

interface Note {
  confidence: Exclude<Confidence, 'HIGH'>;
  reason: string;
}

type Outcome =
  | { reason: string }
  | {
      /** Driver name → strength (0..1, or -1..1 for signed drivers). */
      strengths: Record<string, number>;
      /** Optional drivers left out, with why. */
      missing: { name: string; why: string }[];
      notes: Note[];
      gap?: Gap;
    };

type Model = (f: Inputs, snapshot: FeatureSnapshot, ctx: ScoreContext) => Outcome;

/** A required input that is unavailable makes the score null; thrown by Inputs.need. */
class RequiredMissing {
  constructor(readonly reason: string) {}
}

class Inputs {
  constructor(private readonly snapshot: FeatureSnapshot) {}

  get(name: FeatureName): number | null {
    return this.snapshot.features[name] ?? null;
  }

  need(name: FeatureName): number {
    const v = this.get(name);
    if (v === null) throw new RequiredMissing(`${name} unavailable`);
    return v;
  }

  /** Why a price-based input is unavailable. */
  priceGap(window: string): string {
    return this.snapshot.priceUsd === null ? 'no market data yet' : `less than ${window} of price history`;
  }
}

const clamp = (x: number, lo: number, hi: number) => (x < lo ? lo : x > hi ? hi : x);
const clamp01 = (x: number) => clamp(x, 0, 1);
const logSat = (x: number, full: number) => clamp01(Math.log1p(Math.max(0, x)) / Math.log1p(full));
const accel = (ratio: number, full: number) => clamp01((ratio - 1) / (full - 1));

function sized(n: number, low: number, medium: number, what: string): Note[] {
  if (n < low) return [{ confidence: 'LOW', reason: `only ${n} ${what}` }];
  if (n < medium) return [{ confidence: 'MEDIUM', reason: `only ${n} ${what}` }];
  return [];
}

const MODELS: Record<ScoreName, Model> = {
  momentum(f) {
    const pc1h = f.get('price_change_1h');
    if (pc1h === null) return { reason: f.priceGap('1h') };
    const strengths: Record<string, number> = { price_change_1h: clamp01(pc1h / S.priceChange1hFull) };
    const missing: { name: string; why: string }[] = [];
    const pc24h = f.get('price_change_24h');
    if (pc24h === null) missing.push({ name: 'price_change_24h', why: f.priceGap('24h') });
    else strengths.price_change_24h = clamp01(pc24h / S.priceChange24hFull);
    const va = f.get('volume_acceleration');
    // volume_acceleration is null both without volume (a true 0) and without market data.
    if (va !== null) strengths.volume_acceleration = accel(va, S.volumeAccelerationFull);
    else if (f.get('volume_24h') === 0) strengths.volume_acceleration = 0;
    else missing.push({ name: 'volume_acceleration', why: 'volume_24h unknown' });
    strengths.mention_velocity_1h = mentionAccel(f, S.momentumVelocityFull);
    const liquidity = f.get('liquidity_usd');
    const notes: Note[] =
      liquidity !== null && liquidity < S.thinLiquidityUsd
        ? [{ confidence: 'LOW', reason: `liquidity $${Math.round(liquidity)} below $${S.thinLiquidityUsd}: price moves are noisy` }]
        : [];
    return { strengths, missing, notes };
  },

  conviction(f) {
    const mentions = f.need('mentions_24h');
    if (mentions === 0) return { reason: 'no mentions in the last 24h: there is no attention to judge' };
    const authors = f.need('unique_authors_24h');
    return {
      strengths: {
        quality_weighted_attention_1h: clamp01(f.need('quality_weighted_attention_1h') / S.qualityAttentionFull),
        unique_authors_24h: logSat(authors, S.convictionAuthorsFull),
        engagement_per_mention_24h: logSat(f.need('engagement_24h') / mentions, S.engagementPerMentionFull),
      },
      missing: [],
      notes: sized(authors, 3, 10, 'unique authors in 24h'),
    };
  },

  crowding(f) {
    const strengths: Record<string, number> = {
      unique_authors_24h: logSat(f.need('unique_authors_24h'), S.crowdingAuthorsFull),
      // Null only without authors in the hour: then nobody new arrived.
      new_author_share_1h: f.need('unique_authors_1h') === 0 ? 0 : clamp01(f.need('new_author_share_1h')),
      mention_velocity_1h: mentionAccel(f, S.crowdingVelocityFull),
    };
    const missing: { name: string; why: string }[] = [];
    const pc24h = f.get('price_change_24h');
    if (pc24h === null) missing.push({ name: 'price_change_24h', why: f.priceGap('24h') });
    else strengths.price_change_24h = clamp01(pc24h / S.crowdingPriceChange24hFull);
    return { strengths, missing, notes: [] };
  },

  early_quality(f) {
    const authors1h = f.need('unique_authors_1h');
    if (authors1h === 0) return { reason: 'no authors mentioned the token in the last hour' };
    return {
      strengths: {
        quality_per_author_1h: clamp01(f.need('quality_weighted_attention_1h') / authors1h),
        unique_authors_24h: 1 - logSat(f.need('unique_authors_24h'), S.earlinessAuthorsFull),
      },
      missing: [],
      notes: sized(authors1h, 3, 5, 'authors in the last hour'),
    };
  },

  narrative_velocity(f, snapshot, ctx) {
    const share = f.get('narrative_share');
    if (share === null) return { reason: 'no complete hour of mentions yet (narrative_share unavailable)' };
    const strengths: Record<string, number> = { narrative_share: clamp01(share / S.narrativeShareFull) };
    const missing: { name: string; why: string }[] = [];
    const change = ctx.narratives.attentionShareChange24h(snapshot.narrative);
    if (change === null) missing.push({ name: 'narrative_share_change_24h', why: 'needs 48h of narrative history' });
    else strengths.narrative_share_change_24h = clamp01((change + S.narrativeChangeFull) / (2 * S.narrativeChangeFull));
    return { strengths, missing, notes: [] };
  },

  divergence(f) {
    const pc1h = f.get('price_change_1h');
    if (pc1h === null) return { reason: f.priceGap('1h') };
    const mentions = f.need('mentions_24h');
    const velocity = mentions === 0 ? null : f.need('mention_velocity_1h');
    // A floor keeps log2 finite for an hour without mentions after a busy day: that is -1 anyway.
    const social = velocity === null ? 0 : clamp(Math.log2(Math.max(velocity, 1 / 16)) / S.divergenceVelocityOctaves, -1, 1);
    const price = clamp(pc1h / S.priceChange1hFull, -1, 1);
    const notes: Note[] =
      mentions === 0
        ? [{ confidence: 'MEDIUM', reason: 'no mentions in the last 24h: social taken as flat' }]
        : mentions < 5
          ? [{ confidence: 'LOW', reason: `only ${mentions} mentions in 24h: velocity is noisy` }]
          : [];
    return {
      strengths: { baseline: 1, mention_velocity_1h: social, price_change_1h: -price },
      missing: [],
      notes,
      gap: { social, price },
    };
  },

  smart_cohort(_f, snapshot, ctx) {
    const a = ctx.smartCohort.activity(snapshot.tokenId, snapshot.ts);
    if (a.cohortSize === 0) {
      return { reason: 'cohort_top-research has no members yet (no author has a research score at MEDIUM or HIGH confidence)' };
    }
    return {
      strengths: {
        top_research_members_24h: clamp01(a.members24h / a.cohortSize / S.smartBreadthFull),
        top_research_mentions_24h: logSat(a.mentions24h, S.smartMentionsFull),
      },
      missing: [],
      notes: sized(a.cohortSize, 5, TOP_RESEARCH_SIZE, 'members in cohort_top-research'),
    };
  },
};

/** mention_velocity_1h as a 0..1 acceleration; without mentions in 24h it is truly 0. */
function mentionAccel(f: Inputs, full: number): number {
  if (f.need('mentions_24h') === 0) return 0;
  return accel(f.need('mention_velocity_1h'), full);
}

function evaluate(model: Model, f: Inputs, snapshot: FeatureSnapshot, ctx: ScoreContext): Outcome {
  try {
    return model(f, snapshot, ctx);
  } catch (err) {
    if (err instanceof RequiredMissing) return { reason: err.reason };
    throw err;
  }
}

// ---- drivers that sum exactly ------------------------------------------------------

/** The divergence baseline stays exactly 50: rounding remainders never go to it. */
const FIXED_DRIVERS = new Set(['baseline']);
/** Strength from which a side counts as moving, and gap from which one side leads. */
const MOVING = 0.25;
const LEADING = 0.5;
const LEVEL: Record<Confidence, number> = { HIGH: 0, MEDIUM: 1, LOW: 2 };

/** Nearest multiple of the step; `+ 0` turns -0 into 0. */
const quantise = (x: number) => Math.round(x / SCORE_STEP) * SCORE_STEP + 0;

function compose(doc: ScoreModelDoc, outcome: Outcome): ScoreDetail {
  if ('reason' in outcome) {
    return { score: doc.score, modelVersion: doc.modelVersion, value: null, drivers: [], confidence: 'LOW', reason: outcome.reason };
  }
  // Plain loops, no intermediate arrays: this runs seven times per snapshot. The sums keep
  // the order of the drivers, so every float comes out as before.
  const { strengths } = outcome;
  const present: ScoreDriverDoc[] = [];
  let presentPoints = 0;
  let missingPoints = 0;
  for (const d of doc.drivers) {
    if (d.name in strengths) {
      present.push(d);
      presentPoints += d.maxPoints;
    } else {
      missingPoints += d.maxPoints;
    }
  }
  // Missing optional drivers' points are spread over the present ones in proportion.
  const spread = (presentPoints + missingPoints) / presentPoints;
  const raw: number[] = new Array(present.length);
  let rawSum = 0;
  for (let i = 0; i < present.length; i++) {
    const d = present[i];
    raw[i] = d.maxPoints * (FIXED_DRIVERS.has(d.name) ? 1 : spread) * strengths[d.name];
    rawSum += raw[i];
  }
  const value = quantise(clamp(rawSum, 0, 100));
  const contributions: number[] = new Array(raw.length);
  let contributed = 0;
  let largest = -1;
  for (let i = 0; i < raw.length; i++) {
    contributions[i] = quantise(raw[i]);
    contributed += contributions[i];
    if (FIXED_DRIVERS.has(present[i].name)) continue;
    if (largest < 0 || Math.abs(raw[i]) > Math.abs(raw[largest])) largest = i;
  }
  // Every term is a multiple of the step, so this remainder and the sums are exact.
  contributions[largest] += value - contributed;
  const drivers: ScoreDriver[] = new Array(present.length);
  for (let i = 0; i < present.length; i++) drivers[i] = { name: present[i].name, contribution: contributions[i] + 0 };

  let notes = outcome.notes;
  if (outcome.missing.length > 0) {
    const total = presentPoints + missingPoints;
    notes = [
      ...notes,
      { confidence: missingPoints * 2 >= total ? 'LOW' : 'MEDIUM', reason: outcome.missing.map((m) => `${m.name} unavailable (${m.why})`).join('; ') },
    ];
  }
  let confidence: Confidence = 'HIGH';
  let reason: string | null = null;
  for (const n of notes) {
    if (LEVEL[n.confidence] > LEVEL[confidence]) confidence = n.confidence;
    reason = reason === null ? n.reason : `${reason}; ${n.reason}`;
  }
  return { score: doc.score, modelVersion: doc.modelVersion, value, drivers, confidence, reason };
}

/** The rule of models.ts DIVERGENCE_STATE_RULE. */
function divergenceState(gap: Gap | null): DivergenceState {
  if (gap === null) return 'none';
  const lead = gap.social - gap.price;
  if (gap.social >= MOVING && lead >= LEADING) return 'social_leading';
  if (gap.price >= MOVING && lead <= -LEADING) return 'price_leading';
  if (Math.abs(lead) < LEADING && (Math.abs(gap.social) >= MOVING || Math.abs(gap.price) >= MOVING)) return 'aligned';
  return 'none';
}
