import { describe, expect, it } from 'vitest';
import { presentSignal } from '../../presenters/signal.ts';
import { toWire } from '../../presenters/wire.ts';
import { snakeKeys } from '../../infra/store/snake-keys.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import { SCORE_NAMES } from '../../schemas/records/primitives.ts';
import {
  PublicEventSchema,
  type ConvergenceEvent,
  type NarrativeBucket,
  type PublicEvent,
  type QuantSnapshot,
  type Signal,
} from '../../schemas/records.ts';
import { UNKNOWN_ACTIVITY, UNKNOWN_MARKET } from '../../test/helpers/quant-snapshot.ts';
import type { OutputRecord } from '../runtime/processor.ts';
import { deterministicId } from '../runtime/runtime.ts';
import { evmAddress, HOUR, MIN, T0, tokenMeta } from '../quant-engine/tokens/fixtures.ts';
import { publicEvents } from './public-events.ts';
import type { Scores } from './rules.ts';

type Input = [topic: string, value: { ts: number }];

/** Runs inputs through a fresh state; returns the public events, validated. */
function run(inputs: Input[]): PublicEvent[] {
  const state = publicEvents.createState(0);
  const outputs: OutputRecord[] = [];
  const ctx = { eventTime: 0, watermark: 0, id: deterministicId, emit: (o: OutputRecord) => outputs.push(o), reject: (r: string) => { throw new Error(r); } };
  inputs.forEach(([topic, value], offset) => publicEvents.process(state, { topic, partition: 0, offset, key: null, timestamp: value.ts, value }, ctx));
  for (const o of outputs) expect(o.topic).toBe(TOPICS.publicEvents.name);
  return outputs.map((o) => PublicEventSchema.parse(o.value));
}

const data = (e: PublicEvent) => JSON.parse(e.data) as Record<string, unknown>;
const meta = tokenMeta('tk_a', 'AAA', T0, { address: evmAddress(1) });

function scores(over: Partial<Scores> = {}): Scores {
  return { ...Object.fromEntries(SCORE_NAMES.map((n) => [n, 50])), ...over } as Scores;
}

function snapshot(n: number, s: Scores, activeSignals: string[] = []): QuantSnapshot {
  return {
    snapshotId: `snap_${n.toString(16).padStart(4, '0')}`,
    tokenId: 'tk_a',
    ts: T0 + n * 5 * MIN,
    symbol: 'AAA',
    chain: 'eth',
    narrative: 'ai-agents',
    scores: s,
    scoreDetails: [],
    activeSignals: activeSignals.map((signalId) => ({ signalId, type: 'VELOCITY_3X', ruleVersion: 'velocity_3x@1', firedAt: T0, strength: 40 })),
    market: UNKNOWN_MARKET,
    activity: UNKNOWN_ACTIVITY,
    divergenceState: 'social_leading',
    features: {},
    analogs: null,
    modelVersions: {},
    freshness: { updatedAt: T0, sourceLastEventAt: null, marketLastAt: null, sourceLagMs: null, marketLagMs: null, stale: false, staleReasons: [] },
  };
}

function signal(status: 'active' | 'ended', ts: number): Signal {
  return {
    signalId: 'sig_00ab',
    type: 'VELOCITY_3X',
    label: 'Velocity 3x',
    ruleVersion: 'velocity_3x@1',
    status,
    firedAt: T0,
    endedAt: status === 'ended' ? ts : null,
    endReason: status === 'ended' ? 'max_age' : null,
    strength: 40,
    scores: scores(),
    why: ['mentions tripled'],
    conditions: [{ field: 'mention_velocity_1h', op: '>=', measure: 'value', threshold: 3, actual: 4 }],
    features: {},
    analogs: null,
    tokenId: 'tk_a',
    priorFirings: 0,
    priorSignalIds: [],
    version: status === 'active' ? 1 : 2,
    ts,
  };
}

function convergence(kind: 'auto' | 'manual'): ConvergenceEvent {
  return {
    eventId: kind === 'auto' ? 'cev_01' : 'cev_02',
    cohortId: kind === 'auto' ? 'cohort_top-research' : 'cohort_mine',
    cohortKind: kind,
    cohortName: kind === 'auto' ? 'Top research' : 'Mine',
    cohortVersion: 1,
    ownerKeyId: kind === 'auto' ? null : 'key_0123abcd',
    teamId: null,
    tokenId: 'tk_a',
    ts: T0 + HOUR,
    memberCount: 3,
    cohortSize: 10,
    windowMinutes: 60,
    members: ['au_1', 'au_2', 'au_3'],
    score: 72,
  };
}

function bucket(hour: number, attentionShare24h: number | null): NarrativeBucket {
  return {
    narrative: 'ai-agents',
    bucketStart: T0 + hour * HOUR,
    ts: T0 + (hour + 1) * HOUR,
    theses: 4,
    mentions: 5,
    totalMentions: 20,
    uniqueAuthors: 3,
    newAuthors: 1,
    authorIds: ['au_1'],
    authorGrowth: null,
    attentionShare: 0.25,
    attentionShare24h,
    attentionShareChange24h: null,
    topTokens: [],
    topContributors: [],
  };
}

const S = TOPICS.snapshots.name;

describe('public events', () => {
  it('publishes signal.created and signal.ended with the signal object exactly as the REST API renders it', () => {
    const fired = signal('active', T0);
    const ended = signal('ended', T0 + HOUR);
    const events = run([[TOPICS.tokens.name, meta], [TOPICS.signals.name, fired], [TOPICS.signals.name, ended]]);
    expect(events.map((e) => e.type)).toEqual(['signal.created', 'signal.ended']);
    const tokens = new Map([['tk_a', snakeKeys(meta)]]);
    expect(data(events[0])).toEqual(toWire(presentSignal(fired, tokens)));
    expect(data(events[0]).token).toMatchObject({ id: 'tk_a', symbol: 'AAA', logo_url: null });
    expect(events[1]).toMatchObject({ ts: T0 + HOUR, tokenId: 'tk_a', ownerKeyId: null, dataset: 'live' });
    expect(data(events[1])).toMatchObject({ status: 'ended', ended_at: new Date(T0 + HOUR).toISOString(), end_reason: 'max_age' });
  });

  it('embeds the token as it stood at the event, whatever newer metadata the merge handed over first', () => {
    const renamed = tokenMeta('tk_a', 'AAB', T0 + 2 * HOUR, { address: evmAddress(1) });
    // The engine is still writing quant.signals when the later rename is read: the order a live merge may give.
    const [created] = run([[TOPICS.tokens.name, meta], [TOPICS.tokens.name, renamed], [TOPICS.signals.name, signal('active', T0 + HOUR)]]);
    const [inOrder] = run([[TOPICS.tokens.name, meta], [TOPICS.signals.name, signal('active', T0 + HOUR)], [TOPICS.tokens.name, renamed]]);
    expect(created).toEqual(inOrder);
    expect(data(created)).toEqual(toWire(presentSignal(signal('active', T0 + HOUR), new Map([['tk_a', snakeKeys(meta)]]))));
    expect(run([[TOPICS.tokens.name, meta], [TOPICS.tokens.name, renamed], [TOPICS.signals.name, signal('active', T0 + 3 * HOUR)]]).map(data)[0]).toMatchObject({
      token: { symbol: 'AAB' },
    });
  });

  it('publishes token.score.updated once a score has moved 3 points from what was last published', () => {
    const events = run([
      [S, snapshot(0, scores())], // baseline: nothing moved yet
      [S, snapshot(1, scores({ momentum: 52 }))], // 2 points
      [S, snapshot(2, scores({ momentum: 52.9 }))], // 2.9 points
      [S, snapshot(3, scores({ momentum: 53 }))], // 3 points from the baseline
      [S, snapshot(4, scores({ momentum: 55 }))], // 2 from the last published
      [S, snapshot(5, scores({ momentum: 55, crowding: 47 }))], // crowding down 3
    ]);
    expect(events.map((e) => e.type)).toEqual(['token.score.updated', 'token.score.updated']);
    expect(data(events[0])).toMatchObject({
      token_id: 'tk_a',
      symbol: 'AAA',
      ts: new Date(T0 + 15 * MIN).toISOString(),
      scores: { momentum: 53 },
      previous: { momentum: 50 },
      divergence_state: 'social_leading',
      active_signals: [],
    });
    expect(data(events[1])).toMatchObject({ scores: { momentum: 55, crowding: 47 }, previous: { momentum: 53, crowding: 50 } });
    expect(events[0].ts).toBe(T0 + 15 * MIN);
  });

  it('publishes token.score.updated when the active signals change or a score becomes unknown', () => {
    const events = run([
      [S, snapshot(0, scores())],
      [S, snapshot(1, scores(), ['sig_01'])],
      [S, snapshot(2, scores(), ['sig_01'])],
      [S, snapshot(3, scores({ divergence: null }), ['sig_01'])],
    ]);
    expect(events.map((e) => JSON.parse(e.data).ts)).toEqual([1, 3].map((n) => new Date(T0 + n * 5 * MIN).toISOString()));
    expect(data(events[0]).active_signals).toEqual([
      { id: 'sig_01', type: 'VELOCITY_3X', rule_version: 'velocity_3x@1', fired_at: new Date(T0).toISOString(), strength: 40 },
    ]);
    expect(data(events[1])).toMatchObject({ scores: { divergence: null }, previous: { divergence: 50 } });
  });

  it('addresses a manual cohort\'s convergence to its owner and an auto cohort\'s to everyone', () => {
    const [auto, manual] = run([[TOPICS.tokens.name, meta], [TOPICS.cohortEvents.name, convergence('auto')], [TOPICS.cohortEvents.name, convergence('manual')]]);
    expect(auto).toMatchObject({ type: 'cohort.convergence', ownerKeyId: null, teamId: null, tokenId: 'tk_a' });
    expect(manual).toMatchObject({ type: 'cohort.convergence', ownerKeyId: 'key_0123abcd' });
    expect(data(auto)).toMatchObject({
      cohort: { id: 'cohort_top-research', kind: 'auto', name: 'Top research' },
      id: 'cev_01',
      token: { id: 'tk_a' },
      member_count: 3,
      cohort_size: 10,
      window_minutes: 60,
      members: ['au_1', 'au_2', 'au_3'],
      score: 72,
    });
  });

  it('publishes narrative.shift when the 24 h attention share moved 5 points since the last shift', () => {
    const events = run([
      [TOPICS.narratives.name, bucket(0, null)],
      [TOPICS.narratives.name, bucket(1, 0.2)],
      [TOPICS.narratives.name, bucket(2, 0.24)],
      [TOPICS.narratives.name, bucket(3, 0.26)],
      [TOPICS.narratives.name, bucket(4, 0.22)],
    ]);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'narrative.shift', tokenId: null, ts: T0 + 4 * HOUR });
    expect(data(events[0])).toMatchObject({ narrative: { object: 'narrative', slug: 'ai-agents', attention_share_24h: 0.26 }, previous_attention_share_24h: 0.2, direction: 'up' });
  });

  it('gives every event the same ev_ id on a replay, and distinct events distinct ids', () => {
    const inputs: Input[] = [
      [TOPICS.tokens.name, meta],
      [TOPICS.signals.name, signal('active', T0)],
      [S, snapshot(0, scores())],
      [S, snapshot(1, scores({ momentum: 60 }))],
      [TOPICS.cohortEvents.name, convergence('auto')],
      [TOPICS.signals.name, signal('ended', T0 + HOUR)],
    ];
    const first = run(inputs);
    const replay = run(inputs);
    expect(replay).toEqual(first);
    const ids = first.map((e) => e.eventId);
    expect(new Set(ids).size).toBe(4);
    for (const id of ids) expect(id).toMatch(/^ev_[0-9a-f]{24}$/);
  });

  it('changes nothing when the engine repeats what it produced since its checkpoint, after a crash', () => {
    const produced: Input[] = [
      [TOPICS.tokens.name, meta],
      [TOPICS.signals.name, signal('active', T0)],
      [S, snapshot(0, scores())],
      [S, snapshot(1, scores({ momentum: 60 }))],
      [TOPICS.cohortEvents.name, convergence('auto')],
      [S, snapshot(2, scores({ momentum: 40 }))],
      [TOPICS.signals.name, signal('ended', T0 + HOUR)],
    ];
    // The engine crashed after its third output and repeated everything from its checkpoint.
    const repeated = [...produced.slice(0, 4), ...produced.slice(1)];
    expect(run(repeated)).toEqual(run(produced));
    expect(run(produced).map((e) => e.type)).toEqual(['signal.created', 'token.score.updated', 'cohort.convergence', 'token.score.updated', 'signal.ended']);
  });
});
