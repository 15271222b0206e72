import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AnalogIndex } from '../../api/services/analog-index.ts';
import { DuckDbStore } from '../../infra/store/duckdb-store.ts';
import { SCORE_NAMES } from '../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../schemas/records/quant-scores.ts';
import { snapshotHistoryRow } from '../../projections/latest-snapshots.ts';
import { migrationsDir } from '../../projections/migrations/index.ts';
import { PROJECTION_TABLES } from '../../projections/tables.ts';
import type { OutcomeRow } from '../../projections/tables/social.ts';
import { waitFor } from '../../infra/wait.ts';
import { UNKNOWN_MARKET, UNKNOWN_ACTIVITY } from '../helpers/quant-snapshot.ts';

/** The API's analog index over a store: built on first use, reloaded in the background, point in time per query. */

const T0 = 1_750_000_000_000;
const HOUR = 3_600_000;

function snapshot(tokenId: string, ts: number, momentum: number): QuantSnapshot {
  const scores = Object.fromEntries(SCORE_NAMES.map((n) => [n, null])) as QuantSnapshot['scores'];
  return {
    snapshotId: `snap_${Buffer.from(`${tokenId}@${ts}`).toString('hex')}`,
    tokenId,
    ts,
    symbol: 'X',
    chain: 'solana',
    narrative: 'memes',
    scores: { ...scores, momentum, crowding: 10, early_quality: 50, narrative_velocity: 40 },
    scoreDetails: [],
    activeSignals: [],
    market: { ...UNKNOWN_MARKET, priceUsd: 1, priceChange1h: 0.01, volumeAcceleration: 1, liquidityUsd: 50_000 },
    activity: { ...UNKNOWN_ACTIVITY },
    divergenceState: 'none',
    features: { price_change_1h: 0.01, volume_acceleration: 1, liquidity_usd: 50_000 },
    analogs: null,
    modelVersions: {},
    freshness: { updatedAt: ts, sourceLastEventAt: null, marketLastAt: null, sourceLagMs: null, marketLagMs: null, stale: true, staleReasons: ['no social activity yet'] },
  };
}

function resolvedOutcome(s: QuantSnapshot, forwardReturn: number): OutcomeRow {
  return {
    outcome_id: `out_${s.snapshotId}`,
    subject_kind: 'snapshot',
    subject_id: s.snapshotId,
    token_id: s.tokenId,
    subject_ts: s.ts,
    horizon: '24h',
    entry_price: 1,
    forward_return: forwardReturn,
    max_drawdown: -0.1,
    peak_return: 0.3,
    time_to_peak_ms: HOUR,
    died: false,
    last_price: 1 + forwardReturn,
    resolved_at: s.ts + 24 * HOUR,
  };
}

describe('AnalogIndex', () => {
  let store: DuckDbStore<typeof PROJECTION_TABLES>;
  let index: AnalogIndex;

  const addCandidates = async (values: { s: QuantSnapshot; r: number }[]) => {
    await store.upsert('snapshot_history', values.map(({ s }) => snapshotHistoryRow(s)));
    await store.upsert('outcomes', values.map(({ s, r }) => resolvedOutcome(s, r)));
  };

  beforeEach(async () => {
    store = await DuckDbStore.open({ path: ':memory:', tables: PROJECTION_TABLES, migrationsDir: migrationsDir('duckdb'), logger: pino({ level: 'silent' }) });
    await store.migrate();
    index = new AnalogIndex({ store, logger: pino({ level: 'silent' }), refreshMs: 50 });
  });

  afterEach(async () => {
    await index.close();
    await store.close();
  });

  it('answers an empty store with no analogs and a LOW-confidence summary', async () => {
    const query = snapshot('tk_q', T0 + 100 * HOUR, 50);
    expect(await index.analogs(query, 40)).toEqual({ neighbours: [], summary: { n: 0, median24h: null, worstDrawdown24h: null, positiveShare: null, confidence: 'LOW' } });
  });

  it('uses only candidates resolved by the query time, never the same token within 24h, nearest first', async () => {
    await addCandidates([
      { s: snapshot('tk_a', T0, 50), r: 0.2 },
      { s: snapshot('tk_b', T0, 10), r: -0.1 },
      // Resolves at T0 + 74h: after the query below.
      { s: snapshot('tk_c', T0 + 50 * HOUR, 50), r: 0.5 },
      // The query's own token, 10h before it.
      { s: snapshot('tk_q', T0 + 60 * HOUR, 50), r: 0.9 },
    ]);
    const { neighbours, summary } = await index.analogs(snapshot('tk_q', T0 + 70 * HOUR, 50), 10);
    expect(neighbours.map((n) => [n.tokenId, n.return24h])).toEqual([
      ['tk_a', 0.2],
      ['tk_b', -0.1],
    ]);
    expect(neighbours[0].distance).toBe(0);
    expect(summary).toMatchObject({ n: 2, median24h: (0.2 - 0.1) / 2, worstDrawdown24h: -0.1, positiveShare: 0.5 });
  });

  it('picks up new candidates in the background, and drops summaries of the older index', async () => {
    const query = snapshot('tk_q', T0 + 100 * HOUR, 50);
    expect((await index.summary(query, 40)).n).toBe(0);
    await addCandidates([{ s: snapshot('tk_a', T0, 50), r: 0.2 }]);
    const summary = await waitFor(async () => {
      const s = await index.summary(query, 40);
      return s.n > 0 && s;
    }, 'the index to reload');
    expect(summary).toMatchObject({ n: 1, median24h: 0.2 });
  });

  it('replaces a worker thread that died with a new one on the next request', async () => {
    await addCandidates([{ s: snapshot('tk_a', T0, 50), r: 0.2 }]);
    const query = snapshot('tk_q', T0 + 100 * HOUR, 50);
    expect((await index.analogs(query, 5)).neighbours).toHaveLength(1);
    // What a crashed thread looks like from outside: every request to it fails.
    const first = await index['worker'];
    await first!.close();
    await expect(index.analogs(query, 5)).rejects.toThrow(/closed/);
    expect((await index.analogs(query, 5)).neighbours).toHaveLength(1);
    expect(await index['worker']).not.toBe(first);
  });

  it('refuses queries once closed', async () => {
    await index.analogs(snapshot('tk_q', T0, 50), 1);
    await index.close();
    await expect(index.analogs(snapshot('tk_q', T0, 50), 1)).rejects.toThrow(/closed/);
  });
});
