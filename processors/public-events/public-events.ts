import { presentCohortConvergence } from '../../presenters/cohort.ts';
import { presentNarrative } from '../../presenters/narrative.ts';
import { DATASET, iso } from '../../presenters/resource.ts';
import { presentActiveSignal, presentSignal } from '../../presenters/signal.ts';
import { toWire } from '../../presenters/wire.ts';
import type { TokenRow } from '../../presenters/tokens-table.ts';
import { snakeKeys } from '../../infra/store/snake-keys.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type {
  ConvergenceEvent,
  NarrativeBucket,
  PublicEvent,
  PublicEventType,
  QuantSnapshot,
  Signal,
  TokenMeta,
} from '../../schemas/records.ts';
import type { InputRecord, Processor, ProcessorContext } from '../runtime/processor.ts';
import { createKeyedDedupeState, firstKeyedDelivery, type KeyedDedupeState } from '../dedupe.ts';
import { IN_MEMORY_TABLES, type KeyedTable, type TableSource } from '../runtime/state/tables.ts';
import { sameSignals, scoresMoved, shareShifted, type Scores } from './rules.ts';

/**
 * Derives the public events from the quant topics, once, for every channel (webhooks, the
 * WebSocket stream). Each event's id is a hash of its type and its source record's id, so
 * a replay or a repeated input gives the same `ev_` id, which receivers deduplicate on.
 * Token metadata is kept, every version, so a signal's `data` embeds the token object as the
 * REST API does, as it stood at the event's time: the merge may hand this task metadata newer
 * than an event whose topic the engine is still writing, and the event's bytes must not
 * depend on that.
 */

interface PublishedScores {
  scores: Scores;
  activeSignals: string[];
}

/**
 * How long a derived record is remembered to drop its repeats: a crashed engine repeats what
 * it produced since its checkpoint, which during a catch-up may span days of event time.
 */
const REPEAT_WINDOW_MS = 30 * 24 * 3_600_000;

export interface PublicEventsState {
  /** Ids of the signal, convergence and narrative records handled (their repeats change nothing). */
  handled: KeyedDedupeState;
  /** Per token: the event time of the last snapshot handled; snapshots of a token come in time order. */
  lastSnapshotAt: KeyedTable<number>;
  /** Per token: its metadata versions, oldest first. */
  tokens: KeyedTable<TokenRow[]>;
  /** Per token: what the last token.score.updated said (or the first snapshot seen). */
  scores: KeyedTable<PublishedScores>;
  /** Per narrative: the 24 h attention share of the last narrative.shift (or the first seen). */
  shares: KeyedTable<number>;
}

/** Every part per token, narrative or hour, so the task's store checkpoints only what changed. */
export function createPublicEventsState(_partition = 0, tables: TableSource = IN_MEMORY_TABLES): PublicEventsState {
  return {
    handled: createKeyedDedupeState(REPEAT_WINDOW_MS, tables, 'handled'),
    lastSnapshotAt: tables.table('last-snapshot-at'),
    tokens: tables.table('tokens'),
    scores: tables.table('scores'),
    shares: tables.table('shares'),
  };
}

interface Audience {
  tokenId: string | null;
  ownerKeyId: string | null;
  teamId: string | null;
}
const EVERYONE = { ownerKeyId: null, teamId: null };

function publish(ctx: ProcessorContext, type: PublicEventType, sourceId: string, ts: number, key: string, audience: Audience, data: object): void {
  const event: PublicEvent = {
    eventId: ctx.id('ev', type, sourceId),
    type,
    ts,
    dataset: DATASET,
    ...audience,
    data: JSON.stringify(toWire(data)),
  };
  ctx.emit({ topic: TOPICS.publicEvents.name, key, value: event, timestamp: ts });
}

function onTokenMeta(state: PublicEventsState, meta: TokenMeta): void {
  // A copy: a table's value changes only by setting a new one.
  const versions = [...(state.tokens.get(meta.tokenId) ?? [])];
  const row = snakeKeys(meta);
  const at = versions.findIndex((v) => v.ts >= meta.ts);
  if (at === -1) versions.push(row);
  else if (versions[at].ts === meta.ts) versions[at] = row;
  else versions.splice(at, 0, row);
  state.tokens.set(meta.tokenId, versions);
}

/** The token's metadata as of `ts`, as the one-entry lookup the presenters take. */
function tokenAsOf(state: PublicEventsState, tokenId: string, ts: number): ReadonlyMap<string, TokenRow> {
  const version = state.tokens.get(tokenId)?.filter((v) => v.ts <= ts).at(-1);
  return new Map(version === undefined ? [] : [[tokenId, version]]);
}

function onSignal(state: PublicEventsState, signal: Signal, ctx: ProcessorContext): void {
  if (!firstKeyedDelivery(state.handled, `signal:${signal.signalId}:${signal.status}`, signal.ts)) return;
  const type = signal.status === 'active' ? 'signal.created' : 'signal.ended';
  const data = presentSignal(signal, tokenAsOf(state, signal.tokenId, signal.ts));
  publish(ctx, type, signal.signalId, signal.ts, signal.tokenId, { tokenId: signal.tokenId, ...EVERYONE }, data);
}

function onSnapshot(state: PublicEventsState, s: QuantSnapshot, ctx: ProcessorContext): void {
  // A repeated snapshot compared with the scores published since would publish a move again.
  if (s.ts <= (state.lastSnapshotAt.get(s.tokenId) ?? -Infinity)) return;
  state.lastSnapshotAt.set(s.tokenId, s.ts);
  const current: PublishedScores = { scores: s.scores, activeSignals: s.activeSignals.map((a) => a.signalId) };
  const previous = state.scores.get(s.tokenId);
  if (previous !== undefined && !scoresMoved(previous.scores, current.scores) && sameSignals(previous.activeSignals, current.activeSignals)) return;
  state.scores.set(s.tokenId, current);
  // The first snapshot of a token is the baseline: nothing has moved yet.
  if (previous === undefined) return;
  publish(ctx, 'token.score.updated', s.snapshotId, s.ts, s.tokenId, { tokenId: s.tokenId, ...EVERYONE }, {
    tokenId: s.tokenId,
    symbol: s.symbol,
    ts: iso(s.ts),
    scores: s.scores,
    previous: previous.scores,
    divergenceState: s.divergenceState,
    activeSignals: s.activeSignals.map(presentActiveSignal),
  });
}

function onConvergence(state: PublicEventsState, e: ConvergenceEvent, ctx: ProcessorContext): void {
  if (!firstKeyedDelivery(state.handled, `convergence:${e.eventId}`, e.ts)) return;
  // A manual cohort's convergence is for its owner (and team) only; channels filter on these.
  const audience = { tokenId: e.tokenId, ownerKeyId: e.ownerKeyId, teamId: e.teamId };
  publish(ctx, 'cohort.convergence', e.eventId, e.ts, e.tokenId, audience, presentCohortConvergence(e, tokenAsOf(state, e.tokenId, e.ts)));
}

function onNarrative(state: PublicEventsState, b: NarrativeBucket, ctx: ProcessorContext): void {
  if (!firstKeyedDelivery(state.handled, `narrative:${b.narrative}@${b.bucketStart}@${b.ts}`, b.ts)) return;
  const share = b.attentionShare24h;
  if (share === null) return;
  const previous = state.shares.get(b.narrative);
  if (previous !== undefined && !shareShifted(previous, share)) return;
  state.shares.set(b.narrative, share);
  if (previous === undefined) return;
  publish(ctx, 'narrative.shift', `${b.narrative}@${b.bucketStart}@${b.ts}`, b.ts, b.narrative, { tokenId: null, ...EVERYONE }, {
    narrative: presentNarrative(b),
    previousAttentionShare24h: previous,
    direction: share > previous ? 'up' : 'down',
  });
}

export const publicEvents: Processor<PublicEventsState> = {
  name: 'public-events',
  // 4: the state is kept per token, narrative and hour in tables (runtime/state).
  stateVersion: 4,
  keyedState: true,
  inputs: [TOPICS.tokens.name, TOPICS.signals.name, TOPICS.snapshots.name, TOPICS.cohortEvents.name, TOPICS.narratives.name],
  // Narratives are keyed by slug, the others by token: not co-partitioned, so one task sees them all.
  parallelism: 'single',
  outputs: [TOPICS.publicEvents.name],
  allowedLatenessMs: 0,
  createState: createPublicEventsState,
  process(state, record: InputRecord, ctx) {
    switch (record.topic) {
      case TOPICS.tokens.name:
        return onTokenMeta(state, record.value as TokenMeta);
      case TOPICS.signals.name:
        return onSignal(state, record.value as Signal, ctx);
      case TOPICS.snapshots.name:
        return onSnapshot(state, record.value as QuantSnapshot, ctx);
      case TOPICS.cohortEvents.name:
        return onConvergence(state, record.value as ConvergenceEvent, ctx);
      case TOPICS.narratives.name:
        return onNarrative(state, record.value as NarrativeBucket, ctx);
    }
  },
};
