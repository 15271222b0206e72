import { deserialize, serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import type { Mention } from '../../../schemas/records.ts';
import { FeatureSnapshotSchema, type FeatureSnapshot } from '../../../schemas/records/quant-market.ts';
import { MENTIONS_TOPIC } from '../mentions/mentions.ts';
import { avroRoundTrip, HOUR, MIN, post, seededRandom, T0, tick, tokenMeta } from '../tokens/fixtures.ts';
import { FEATURE_DEFINITIONS, FEATURE_NAMES, UNSCORED_AUTHOR_WEIGHT, type FeatureName } from './definitions.ts';
import { FEATURES_TOPIC, featuresPriceLookup } from './features.ts';
import { advance, createPipeline, feed, type Pipeline, type WorldEvent } from './pipeline-fixture.ts';

const meta = (tokenId: string, symbol: string, ts = T0): WorldEvent => ({ kind: 'meta', value: tokenMeta(tokenId, symbol, ts) });
const says = (postId: string, authorId: string, ts: number, refs: string[]): WorldEvent => ({
  kind: 'post',
  value: post(postId, authorId, ts, refs),
});
const trade = (tokenId: string, ts: number, price: number, over: Parameters<typeof tick>[3] = {}): WorldEvent => ({
  kind: 'tick',
  value: tick(tokenId, ts, price, over),
});

function run(events: WorldEvent[], p = createPipeline()): Pipeline {
  for (const e of events) feed(p, e);
  return p;
}

function snapshotAt(p: Pipeline, tokenId: string, ts: number): FeatureSnapshot {
  const s = p.snapshots.find((x) => x.tokenId === tokenId && x.ts === ts);
  if (!s) throw new Error(`no snapshot of ${tokenId} at T0+${(ts - T0) / MIN}m`);
  return s;
}

function features(p: Pipeline, tokenId: string, ts: number): Record<FeatureName, number | null> {
  return snapshotAt(p, tokenId, ts).features as Record<FeatureName, number | null>;
}

describe('feature definitions', () => {
  it('defines every feature a snapshot carries, with a unit and a sentence', () => {
    const p = run([meta('tk_1', 'AAA'), trade('tk_1', T0 + MIN, 1)]);
    advance(p, T0 + 6 * MIN);
    expect(Object.keys(features(p, 'tk_1', T0 + 5 * MIN))).toEqual(FEATURE_NAMES);
    for (const name of FEATURE_NAMES) expect(FEATURE_DEFINITIONS[name].definition.length).toBeGreaterThan(20);
  });
});

describe('features', () => {
  it('leaves market features null, not 0, before any market data', () => {
    const p = run([meta('tk_1', 'AAA'), says('po_1', 'au_1', T0 + MIN, ['tk_1']), says('po_2', 'au_2', T0 + 2 * MIN, ['$aaa'])]);
    advance(p, T0 + 5 * MIN + 1);
    const f = features(p, 'tk_1', T0 + 5 * MIN);
    for (const name of [
      'price_usd',
      'price_change_15m',
      'price_change_1h',
      'price_change_24h',
      'volume_1h',
      'volume_24h',
      'volume_acceleration',
      'liquidity_usd',
      'market_cap_usd',
      'trades_1h',
      'narrative_share',
    ] as const) {
      expect(f[name], name).toBeNull();
    }
    expect(f).toMatchObject({
      mentions_15m: 2,
      mentions_24h: 2,
      unique_authors_1h: 2,
      mention_velocity_15m: 4,
      mention_velocity_1h: 24,
      new_author_share_1h: 1,
      quality_weighted_attention_1h: 2 * UNSCORED_AUTHOR_WEIGHT,
      engagement_1h: 26,
      late_events_24h: 0,
    });
    expect(snapshotAt(p, 'tk_1', T0 + 5 * MIN)).toMatchObject({ priceUsd: null, marketLastAt: null, sourceLastEventAt: T0 + 2 * MIN });
    // The first grid time only saw the listing: social counts are true zeros, ratios unknown.
    expect(features(p, 'tk_1', T0)).toMatchObject({ mentions_1h: 0, unique_authors_24h: 0, mention_velocity_1h: null, new_author_share_1h: null });
  });

  it('counts windows as (b - W, b]: a snapshot at b never includes an event at b + 1ms', () => {
    const b = T0 + HOUR;
    const p = run([
      meta('tk_1', 'AAA'),
      says('po_1', 'au_1', b - 15 * MIN, ['tk_1']),
      says('po_2', 'au_2', b - 15 * MIN + 1, ['tk_1']),
      says('po_3', 'au_3', b, ['tk_1']),
      trade('tk_1', b, 2),
      says('po_4', 'au_4', b + 1, ['tk_1']),
      trade('tk_1', b + 1, 3),
    ]);
    advance(p, b + 5 * MIN + 1);
    expect(features(p, 'tk_1', b)).toMatchObject({ mentions_15m: 2, unique_authors_15m: 2, mentions_1h: 3, price_usd: 2 });
    expect(snapshotAt(p, 'tk_1', b)).toMatchObject({ marketLastAt: b, sourceLastEventAt: b, priceUsd: 2 });
    expect(features(p, 'tk_1', b + 5 * MIN)).toMatchObject({ mentions_15m: 2, mentions_1h: 4, price_usd: 3 });
  });

  it('counts distinct and new authors, and weighs them by research score with a prior for the unscored', () => {
    const scores: Record<string, number> = { au_3: 80 };
    const p = createPipeline({ researchScore: (a) => scores[a] ?? null });
    run(
      [
        meta('tk_1', 'AAA'),
        says('po_1', 'au_1', T0 + 10 * MIN, ['tk_1']),
        says('po_2', 'au_1', T0 + 100 * MIN, ['tk_1']),
        says('po_3', 'au_2', T0 + 110 * MIN, ['tk_1', '$AAA']),
        says('po_4', 'au_3', T0 + 115 * MIN, ['tk_1']),
        says('po_5', 'au_3', T0 + 118 * MIN, ['tk_1']),
      ],
      p,
    );
    advance(p, T0 + 2 * HOUR + 1);
    expect(features(p, 'tk_1', T0 + 2 * HOUR)).toMatchObject({
      mentions_1h: 4,
      mentions_24h: 5,
      unique_authors_15m: 2,
      unique_authors_1h: 3,
      unique_authors_24h: 3,
      // au_2 and au_3 first mentioned it within the hour; au_1 had before.
      new_author_share_1h: 2 / 3,
      quality_weighted_attention_1h: 2 * UNSCORED_AUTHOR_WEIGHT + 0.8,
      mention_velocity_1h: 4 / (5 / 24),
    });
  });

  it('computes price changes against the last price at or before b - W, volumes and trades over the window', () => {
    const b = T0 + 24 * HOUR;
    const p = run([
      meta('tk_1', 'AAA'),
      trade('tk_1', T0, 1, { volumeUsd: 10, trades: 1 }),
      trade('tk_1', T0 + 10 * MIN, 1.1, { volumeUsd: 20, trades: 2 }),
      trade('tk_1', b - HOUR, 1.2, { volumeUsd: 30, trades: 3 }),
      trade('tk_1', b - 50 * MIN, 1.25, { volumeUsd: 40, trades: 4 }),
      trade('tk_1', b - 15 * MIN, 1.5, { volumeUsd: 50, trades: 5 }),
      trade('tk_1', b, 2, { volumeUsd: 60, trades: 6, liquidityUsd: 7000, marketCapUsd: 9e6 }),
    ]);
    advance(p, b + 1);
    const f = features(p, 'tk_1', b);
    expect(f.price_usd).toBe(2);
    expect(f.price_change_15m).toBeCloseTo(2 / 1.5 - 1, 12);
    expect(f.price_change_1h).toBeCloseTo(2 / 1.2 - 1, 12);
    expect(f.price_change_24h).toBeCloseTo(2 / 1 - 1, 12);
    expect(f).toMatchObject({ volume_1h: 150, volume_24h: 200, trades_1h: 15, liquidity_usd: 7000, market_cap_usd: 9e6 });
    expect(f.volume_acceleration).toBeCloseTo(150 / (200 / 24), 12);
    // An hour earlier there was no price 24h back yet.
    expect(features(p, 'tk_1', b - HOUR).price_change_24h).toBeNull();
    expect(featuresPriceLookup(p.features).lastPrice('tk_1')).toBe(2);
    expect(featuresPriceLookup(p.features).lastPrice('tk_nope')).toBeNull();
  });

  it('snapshots every 5 minutes while the token changes and hourly while it is quiet', () => {
    const events: WorldEvent[] = [meta('tk_1', 'AAA'), meta('tk_2', 'BBB'), trade('tk_1', T0 + MIN, 1), trade('tk_1', T0 + 7 * MIN, 1)];
    for (let t = T0 + 8 * MIN; t < T0 + 3 * HOUR; t += 5 * MIN) events.push(trade('tk_2', t, 1));
    const p = run(events);
    const times = p.snapshots.filter((s) => s.tokenId === 'tk_1').map((s) => (s.ts - T0) / MIN);
    expect(times).toEqual([0, 5, 10, 70, 130]);
    expect(p.snapshots.filter((s) => s.tokenId === 'tk_2').length).toBe(35);
    expect(p.emitter.outputs.filter((o) => o.topic === FEATURES_TOPIC).map((o) => [o.key, o.timestamp, (o.value as FeatureSnapshot).ts])).toEqual(
      p.snapshots.map((s) => [s.tokenId, s.ts, s.ts]),
    );
  });

  it('applies late events for the future, counts them, and never rewrites an emitted snapshot', () => {
    const p = run([
      meta('tk_1', 'AAA'),
      trade('tk_1', T0 + MIN, 1),
      says('po_1', 'au_1', T0 + 2 * MIN, ['tk_1']),
      trade('tk_1', T0 + 21 * MIN, 3),
    ]);
    const emitted = structuredClone(p.emitter.outputs);
    // Older than the grid times T0+5m..T0+20m already processed.
    feed(p, says('po_2', 'au_2', T0 + 3 * MIN, ['tk_1']));
    feed(p, trade('tk_1', T0 + 4 * MIN, 2));
    expect(p.emitter.outputs.slice(0, emitted.length)).toEqual(emitted);
    expect(features(p, 'tk_1', T0 + 5 * MIN)).toMatchObject({ mentions_1h: 1, price_usd: 1, late_events_24h: 0 });
    feed(p, trade('tk_1', T0 + 26 * MIN, 4));
    // T0+25m is the first snapshot after them: both are in its windows and counted as late.
    expect(features(p, 'tk_1', T0 + 25 * MIN)).toMatchObject({
      mentions_1h: 2,
      unique_authors_1h: 2,
      price_usd: 3,
      // The last price at or before T0+10m is now the late tick's.
      price_change_15m: 3 / 2 - 1,
      late_events_24h: 2,
    });
    expect(p.features.clock.get('clock')!.lateEvents).toBe(2);
    advance(p, T0 + 25 * HOUR);
    // Quiet since T0+26m: hourly snapshots from T0+30m. The late events arrived in hour T0.
    expect(features(p, 'tk_1', T0 + 23 * HOUR + 30 * MIN).late_events_24h).toBe(2);
    expect(features(p, 'tk_1', T0 + 24 * HOUR + 30 * MIN).late_events_24h).toBe(0);
  });

  it('emits snapshots the Avro schema and the validator accept', () => {
    const p = run([meta('tk_1', 'AAA'), trade('tk_1', T0 + MIN, 1.5), says('po_1', 'au_1', T0 + 2 * MIN, ['tk_1'])]);
    advance(p, T0 + 6 * MIN);
    const snapshot = snapshotAt(p, 'tk_1', T0 + 5 * MIN);
    expect(snapshot.snapshotId).toBe(p.emitter.id('snap', 'tk_1', T0 + 5 * MIN));
    expect(FeatureSnapshotSchema.parse(avroRoundTrip('feature-snapshot', snapshot))).toEqual(snapshot);
  });
});

/** A random world of three tokens with ticks and posts, some of them arriving late. */
function randomWorld(seed: number, hours: number): WorldEvent[] {
  const random = seededRandom(seed);
  const tokens = ['tk_1', 'tk_2', 'tk_3'];
  const events: { at: number; event: WorldEvent }[] = tokens.map((id, i) => ({ at: T0, event: meta(id, i === 2 ? 'AAA' : `T${i}`) }));
  const price = [1, 5, 0.01];
  let n = 0;
  for (let t = T0 + 1; t < T0 + hours * HOUR; t += Math.floor(random() * 4 * MIN)) {
    const k = Math.floor(random() * 3);
    const delay = t > T0 + HOUR && random() < 0.05 ? Math.floor(random() * 40 * MIN) : 0;
    let event: WorldEvent;
    if (random() < 0.4) {
      price[k] *= Math.exp((random() - 0.5) * 0.1);
      event = trade(tokens[k], t, price[k], { volumeUsd: random() * 1000, trades: Math.floor(random() * 9), liquidityUsd: random() * 1e5 });
    } else {
      const author = `au_${Math.floor(random() * 25)}`;
      const refs = random() < 0.2 ? [tokens[k], '$AAA'] : random() < 0.1 ? ['$NOPE'] : [tokens[k]];
      event = says(`po_${n++}`, author, t, refs);
    }
    events.push({ at: t + delay, event });
  }
  // Feed order: arrival time; an event delayed past others arrives late.
  return events.sort((a, b) => a.at - b.at).map((e) => e.event);
}

interface Applied {
  ts: number;
  tick?: WorldEvent & { kind: 'tick' };
  mention?: Mention;
  late: boolean;
  arrivedAt: number;
}

describe('features, property: each snapshot equals a brute-force recomputation from the events applied before it', () => {
  const W = { '15m': 15 * MIN, '1h': HOUR, '6h': 6 * HOUR, '24h': 24 * HOUR } as const;
  const scores: Record<string, number> = { au_1: 90, au_2: 10, au_3: 55 };

  for (const seed of [1, 2, 3]) {
    it(`seed ${seed}`, () => {
      const events = randomWorld(seed, 30);
      const p = createPipeline({ researchScore: (a) => scores[a] ?? null }, { attentionShare: (n) => (n === 'ai-agents' ? 0.25 : null) });
      const applied: Applied[] = [];
      const checked = { snapshots: 0, withLate: 0 };
      let maxSeen = -Infinity;
      for (const event of events) {
        const before = p.snapshots.length;
        const outputsBefore = p.emitter.outputs.length;
        advance(p, event.value.ts);
        for (const s of p.snapshots.slice(before)) {
          checkSnapshot(s, applied);
          checked.snapshots++;
          if (s.features.late_events_24h! > 0) checked.withLate++;
        }
        maxSeen = Math.max(maxSeen, event.value.ts);
        const processedThrough = Math.ceil(maxSeen / (5 * MIN)) * 5 * MIN - 5 * MIN;
        const late = event.value.ts <= processedThrough;
        feed(p, event);
        if (event.kind === 'tick') applied.push({ ts: event.value.ts, tick: event, late, arrivedAt: maxSeen });
        for (const o of p.emitter.outputs.slice(outputsBefore)) {
          if (o.topic === MENTIONS_TOPIC) applied.push({ ts: o.timestamp, mention: o.value as Mention, late, arrivedAt: maxSeen });
        }
      }
      expect(checked.snapshots).toBeGreaterThan(300);
      expect(checked.withLate).toBeGreaterThan(10);
    });
  }

  function checkSnapshot(s: FeatureSnapshot, applied: Applied[]): void {
    const b = s.ts;
    const mine = applied.filter((a) => (a.tick?.value.tokenId ?? a.mention?.tokenId) === s.tokenId);
    // Point in time: nothing after b had been applied when b was snapshotted.
    expect(mine.every((a) => a.ts <= b)).toBe(true);
    const mentions = mine.flatMap((a) => (a.mention ? [a.mention] : []));
    const ticks = mine.flatMap((a) => (a.tick ? [a.tick.value] : []));
    const expected: Partial<Record<FeatureName, number | null>> = {};
    const inWindow = (ts: number, w: number) => ts > b - w;
    for (const [name, w] of Object.entries(W)) {
      const inside = mentions.filter((m) => inWindow(m.ts, w));
      expected[`mentions_${name}` as FeatureName] = inside.length;
      expected[`unique_authors_${name}` as FeatureName] = new Set(inside.map((m) => m.authorId)).size;
    }
    const hour = mentions.filter((m) => inWindow(m.ts, HOUR));
    const authors1h = [...new Set(hour.map((m) => m.authorId))];
    const firstSeen = (a: string) => Math.min(...mentions.filter((m) => m.authorId === a).map((m) => m.ts));
    expected.new_author_share_1h = authors1h.length ? authors1h.filter((a) => firstSeen(a) > b - HOUR).length / authors1h.length : null;
    expected.engagement_1h = hour.reduce((sum, m) => sum + m.engagement, 0);
    expected.engagement_24h = mentions.filter((m) => inWindow(m.ts, W['24h'])).reduce((sum, m) => sum + m.engagement, 0);
    expected.mention_velocity_15m = expected.mentions_1h ? (expected.mentions_15m! * 4) / expected.mentions_1h : null;
    expected.mention_velocity_1h = expected.mentions_24h ? expected.mentions_1h! / (expected.mentions_24h / 24) : null;
    expected.late_events_24h = mine.filter((a) => a.late && Math.floor(a.arrivedAt / HOUR) >= Math.floor(b / HOUR) - 23).length;
    expected.narrative_share = 0.25;
    // Ties in time: the one applied last is the latest.
    const lastAtOrBefore = (x: number) => ticks.filter((t) => t.ts <= x).reduce<(typeof ticks)[number] | null>((best, t) => (!best || t.ts >= best.ts ? t : best), null);
    const last = lastAtOrBefore(b);
    expected.price_usd = last?.priceUsd ?? null;
    expected.liquidity_usd = last?.liquidityUsd ?? null;
    expected.trades_1h = last ? ticks.filter((t) => inWindow(t.ts, HOUR)).reduce((sum, t) => sum + t.trades, 0) : null;
    for (const [name, w] of [['15m', 15 * MIN], ['1h', HOUR], ['24h', 24 * HOUR]] as const) {
      const then = lastAtOrBefore(b - w);
      expected[`price_change_${name}`] = last && then ? last.priceUsd / then.priceUsd - 1 : null;
    }
    const f = s.features as Record<FeatureName, number | null>;
    for (const [name, value] of Object.entries(expected)) {
      if (value === null || Number.isInteger(value)) expect(f[name as FeatureName], `${name} of ${s.tokenId} at ${b}`).toBe(value);
      else expect(f[name as FeatureName], `${name} of ${s.tokenId} at ${b}`).toBeCloseTo(value, 9);
    }
    const volume1h = ticks.filter((t) => inWindow(t.ts, HOUR)).reduce((sum, t) => sum + t.volumeUsd, 0);
    if (last) expect(f.volume_1h).toBeCloseTo(volume1h, 6);
    else expect(f.volume_1h).toBeNull();
    const weighted = authors1h.reduce((sum, a) => sum + (a in scores ? scores[a] / 100 : UNSCORED_AUTHOR_WEIGHT), 0);
    expect(f.quality_weighted_attention_1h).toBeCloseTo(weighted, 9);
  }
});

describe('features, property: appending later events never changes outputs already emitted', () => {
  it('gives the same outputs for a prefix of the events, and the same after a checkpoint round trip', () => {
    const events = randomWorld(7, 30);
    const full = run(events);
    const cut = Math.floor(events.length * 0.6);
    const prefix = run(events.slice(0, cut));
    expect(prefix.emitter.outputs.length).toBeGreaterThan(100);
    expect(full.emitter.outputs.slice(0, prefix.emitter.outputs.length)).toEqual(prefix.emitter.outputs);
    // Checkpointed (v8.serialize, as the runtime does) and restored mid-way, the run goes on identically.
    const { emitter, quality, narratives, snapshots, resolutions, ...state } = prefix;
    const restored = { ...(deserialize(serialize(state)) as typeof state), emitter, quality, narratives, snapshots, resolutions };
    run(events.slice(cut), restored);
    expect(restored.emitter.outputs).toEqual(full.emitter.outputs);
  });
});
