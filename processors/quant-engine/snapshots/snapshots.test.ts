import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { QuantSnapshotSchema, type QuantSnapshot } from '../../../schemas/records/quant-scores.ts';
import { expectConforms, recordingEmitter } from '../authors/test-support.ts';
import type { ActiveSignal, AnalogSummary } from '../contracts.ts';
import { MODEL_VERSIONS } from '../scores/models.ts';
import { scoredHistory, type ScoredHistory } from '../scores/test-support.ts';
import { emitSnapshot, formatAge, freshness, SNAPSHOTS_LATEST_TOPIC, SNAPSHOTS_TOPIC } from './snapshots.ts';

const T = Date.UTC(2026, 2, 5, 12);
const MIN = 60_000;
const AVRO_DIR = join(import.meta.dirname, '../../../schemas/avro');

const signal: ActiveSignal = { signalId: 'sig_3f9a', type: 'EARLY_ACCELERATION', ruleVersion: 'early_acceleration@1', firedAt: T - 30 * MIN, strength: 0.72 };
const analogs: AnalogSummary = { n: 40, median24h: 0.031, worstDrawdown24h: -0.42, positiveShare: 0.55, confidence: 'MEDIUM' };

describe('quant snapshots', () => {
  let history: ScoredHistory;
  beforeAll(() => {
    history = scoredHistory({ seed: 11, tokens: 8, authors: 80, days: 1 });
  });

  it('emits each snapshot to the history and the latest topic, keyed by token at its time, and it survives Avro and zod', () => {
    const emitter = recordingEmitter();
    const picks = [history.pairs[0], history.pairs[Math.floor(history.pairs.length / 2)], history.pairs[history.pairs.length - 1]];
    for (const [i, { feature, scored }] of picks.entries()) {
      const value = emitSnapshot(scored, feature, i === 0 ? [] : [signal], i === 2 ? analogs : null, emitter);
      expectConforms('quant-snapshot', QuantSnapshotSchema, value);
      expect(value.scores).toEqual(scored.scores);
      expect(value.features).toEqual(feature.features);
    }
    expect(emitter.outputs.map((o) => [o.topic, o.key, o.timestamp])).toEqual(
      picks.flatMap(({ feature }) => [
        [SNAPSHOTS_TOPIC, feature.tokenId, feature.ts],
        [SNAPSHOTS_LATEST_TOPIC, feature.tokenId, feature.ts],
      ]),
    );
    const last = emitter.values<QuantSnapshot>(SNAPSHOTS_TOPIC)[2];
    expect(last.activeSignals).toEqual([signal]);
    expect(last.analogs).toEqual(analogs);
    expect(last.modelVersions).toEqual({ ...MODEL_VERSIONS });
  });

  it('fills the market and activity blocks from the features, with nulls before market data', () => {
    const { feature, scored } = history.pairs[history.pairs.length - 1];
    const value = emitSnapshot(scored, feature, [], null, recordingEmitter());
    expect(value.market.priceUsd).toBe(feature.priceUsd);
    expect(value.market.priceChange1h).toBe(feature.features.price_change_1h);
    expect(value.activity.uniqueAuthors24h).toBe(feature.features.unique_authors_24h);
    expect(value.divergenceState).toBe(scored.divergenceState);
    const unpriced = { ...feature, priceUsd: null, marketLastAt: null, features: { ...feature.features, price_usd: null, liquidity_usd: null } };
    const bare = emitSnapshot(scored, unpriced, [], null, recordingEmitter());
    expect([bare.market.priceUsd, bare.market.liquidityUsd, bare.freshness.marketLagMs]).toEqual([null, null, null]);
    expect(bare.freshness.staleReasons).toContain('no market data yet');
    expectConforms('quant-snapshot', QuantSnapshotSchema, bare);
  });

  it('refuses scores of another snapshot', () => {
    const [a, b] = history.pairs;
    expect(() => emitSnapshot(a.scored, b.feature, [], null, recordingEmitter())).toThrow(/given with features of/);
  });

  it('rejects a score detail whose drivers do not sum to its value', () => {
    const { feature, scored } = history.pairs[history.pairs.length - 1];
    const value = emitSnapshot(scored, feature, [], null, recordingEmitter());
    const detail = value.scoreDetails.find((d) => d.value !== null && d.drivers.length > 0)!;
    detail.drivers[0] = { ...detail.drivers[0], contribution: detail.drivers[0].contribution + 0.25 };
    expect(QuantSnapshotSchema.safeParse(value).error?.issues[0].message).toMatch(/drivers sum to/);
  });
});

describe('freshness', () => {
  it('is fresh within the thresholds, with lags measured at the snapshot time', () => {
    expect(freshness(T, T - 2 * 60 * MIN, T - 30 * MIN)).toEqual({
      updatedAt: T,
      sourceLastEventAt: T - 120 * MIN,
      marketLastAt: T - 30 * MIN,
      sourceLagMs: 120 * MIN,
      marketLagMs: 30 * MIN,
      stale: false,
      staleReasons: [],
    });
  });

  it('says which side is delayed and by how long', () => {
    const f = freshness(T, T - (2 * 60 + 14) * MIN, T - 42 * MIN - 59_000);
    expect(f.stale).toBe(true);
    expect(f.staleReasons).toEqual(['social activity delayed by 2 h 14 min', 'market data delayed by 42 min']);
  });

  it('names what was never seen, with null lags', () => {
    const f = freshness(T, null, null);
    expect(f).toMatchObject({ stale: true, sourceLagMs: null, marketLagMs: null, staleReasons: ['no social activity yet', 'no market data yet'] });
  });

  it('formats ages in the two largest units', () => {
    expect([formatAge(59_999), formatAge(14 * MIN), formatAge(61 * MIN), formatAge((26 * 60 + 5) * MIN)]).toEqual(['0 min', '14 min', '1 h 1 min', '1 d 2 h']);
  });
});

describe('quant snapshot Avro schema', () => {
  it('names its types uniquely across every schema of the log', () => {
    const owner = new Map<string, string>();
    const clashes: string[] = [];
    const collect = (node: unknown, folder: string): void => {
      if (Array.isArray(node)) return node.forEach((n) => collect(n, folder));
      if (typeof node !== 'object' || node === null) return;
      const n = node as Record<string, unknown>;
      if ((n.type === 'record' || n.type === 'enum' || n.type === 'fixed') && typeof n.name === 'string') {
        const seen = owner.get(n.name);
        if (seen !== undefined && seen !== folder) clashes.push(`${n.name} in ${seen} and ${folder}`);
        owner.set(n.name, folder);
      }
      for (const v of Object.values(n)) collect(v, folder);
    };
    for (const folder of readdirSync(AVRO_DIR, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
      for (const file of readdirSync(join(AVRO_DIR, folder)).filter((f) => f.endsWith('.avsc'))) {
        collect(JSON.parse(readFileSync(join(AVRO_DIR, folder, file), 'utf8')), folder);
      }
    }
    expect(owner.get('QuantSnapshot')).toBe('quant-snapshot');
    expect(clashes).toEqual([]);
  });

  it('carries the same fields as the zod schema', () => {
    const avro = JSON.parse(readFileSync(join(AVRO_DIR, 'quant-snapshot/v1.avsc'), 'utf8')) as { fields: { name: string }[] };
    expect(avro.fields.map((f) => f.name).sort()).toEqual(Object.keys(QuantSnapshotSchema.shape).sort());
  });
});
