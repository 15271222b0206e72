import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import { columns, sql, table } from '../../infra/store/sql-literal.ts';
import { authorMetricsProjection } from '../../projections/author-metrics.ts';
import { cohortEventsProjection } from '../../projections/cohort-events.ts';
import { cohortsProjection } from '../../projections/cohorts.ts';
import { narrativesProjection } from '../../projections/narratives.ts';
import { outcomesProjection } from '../../projections/outcomes.ts';
import { collectiveActivity, getCohort, listCohorts } from '../../projections/read-models/cohorts.ts';
import { getNarrative, heatmap, narrativeMap, rotation } from '../../projections/read-models/narratives.ts';
import type { RecordMeta } from '../../projections/runtime/projection.ts';
import type { MentionRow, ProjectionTables } from '../../projections/tables.ts';
import {
  outcomes,
  type AuthorMetricsRow,
  type CohortEventRow,
  type CohortRow,
  type NarrativeBucketRow,
} from '../../projections/tables/social.ts';
import type { Outcome } from '../../schemas/records/quant-market.ts';
import type { AuthorMetrics, CohortVersion, ConvergenceEvent, NarrativeBucket } from '../../schemas/records/quant-social.ts';
import type { MigratedStoreFactory } from './read-models-quant.contract.ts';
import { storeReads, type ServedReads } from './served-reads.ts';

/**
 * The social read models (authors, cohorts, narratives) over hand-made rows, run against
 * each store. The factory gives a fresh, migrated store over PROJECTION_TABLES.
 */

const H = 3_600_000;
/** Aligned to whole days, so 6h and 1d columns start at D0. */
const D0 = 1_700_006_400_000;

export function metricsRow(version: number, ts: number, hitRate: number): AuthorMetricsRow {
  return {
    author_id: 'a1',
    handle: 'Alice',
    ts,
    version,
    model_version: 'm1',
    calls_total: 10 * version,
    calls_unpriced: 0,
    resolved_calls: 8,
    hits: 4,
    hit_rate: hitRate,
    hit_rate_low: 0.2,
    hit_rate_high: 0.8,
    lead_time_samples: 3,
    median_lead_time_ms: 60_000,
    false_positive_rate: null,
    median_max_drawdown24h: -0.1,
    median_return24h: 0.05,
    consistency: 0.5,
    active_weeks: 2,
    outcome_volatility: 0.3,
    sector_strength: JSON.stringify([
      { narrative: 'ai-agents', samples: 8, hitRate: 0.5, medianReturn24h: null, relativeHitRate: 0.1 },
    ]),
    research_score: 55,
    confidence: 'MEDIUM',
    confidence_reason: null,
  };
}

function cohortRow(id: string, version: number, overrides: Partial<CohortRow>): CohortRow {
  return {
    cohort_id: id,
    kind: 'manual',
    name: id.replace('cohort_', ''),
    owner_key_id: null,
    team_id: null,
    members: JSON.stringify([{ authorId: 'a1', handle: 'Alice' }]),
    version,
    ts: D0 + version,
    rule: 'manual',
    deleted: false,
    command_id: null,
    ...overrides,
  };
}

function eventRow(id: string, cohortId: string, ts: number): CohortEventRow {
  return {
    event_id: id,
    cohort_id: cohortId,
    cohort_kind: 'manual',
    cohort_name: 'team',
    cohort_version: 1,
    owner_key_id: 'key_b',
    team_id: 'team_x',
    token_id: 'tk_a',
    ts,
    member_count: 3,
    cohort_size: 5,
    window_minutes: 60,
    members: JSON.stringify(['a1', 'a2', 'a3']),
    score: 72.5,
  };
}

export function bucketRow(
  narrative: string,
  hour: number,
  values: { mentions: number; total: number; theses: number; authorIds: string[]; authorGrowth?: number | null },
): NarrativeBucketRow {
  return {
    narrative,
    bucket_start: D0 + hour * H,
    ts: D0 + (hour + 1) * H,
    theses: values.theses,
    mentions: values.mentions,
    total_mentions: values.total,
    unique_authors: values.authorIds.length,
    new_authors: 0,
    author_ids: JSON.stringify(values.authorIds),
    author_growth: values.authorGrowth ?? null,
    attention_share: values.total === 0 ? null : values.mentions / values.total,
    attention_share24h: null,
    attention_share_change24h: null,
    top_tokens: JSON.stringify([{ tokenId: 'tk_a', symbol: 'A', mentions: values.mentions }]),
    top_contributors: JSON.stringify([{ authorId: 'u1', handle: 'u1', posts: 1 }]),
  };
}

/**
 * 48 hours of buckets from D0. Hours 0–23: ai-agents 1 and memes 3 of 4 mentions; hours
 * 24–47: ai-agents 3 and memes 1 of 4. memes has no bucket at hour 30; defi appears once,
 * at hour 46, with 4 mentions, making that hour's total 8.
 * Theses: ai-agents h mod 3; memes 2 (6 at hour 10); defi 4.
 * Authors: ai-agents u1 before hour 24, u1 and u2 from then on.
 */
function narrativeRows(): NarrativeBucketRow[] {
  const rows: NarrativeBucketRow[] = [];
  for (let h = 0; h < 48; h++) {
    const late = h >= 24;
    const total = h === 46 ? 8 : 4;
    rows.push(
      bucketRow('ai-agents', h, {
        mentions: late ? 3 : 1,
        total,
        theses: h % 3,
        authorIds: late ? ['u1', 'u2'] : ['u1'],
        authorGrowth: h === 0 ? null : h / 100,
      }),
    );
    if (h !== 30) rows.push(bucketRow('memes', h, { mentions: late ? 1 : 3, total, theses: h === 10 ? 6 : 2, authorIds: ['u3'] }));
  }
  rows.push(bucketRow('defi', 46, { mentions: 4, total: 8, theses: 4, authorIds: ['u4'] }));
  return rows;
}

export function describeReadModelsSocialContract(name: string, factory: MigratedStoreFactory): void {
  describe(`social read models on ${name}`, () => {
    let store: AnalyticalStore<ProjectionTables>;
    let cleanup: (() => Promise<void>) | undefined;
    let served: ServedReads;

    beforeAll(async () => {
      const opened = await factory();
      ({ store, cleanup } = opened);
      served = opened.served ?? storeReads(store);
      // Written out of order and one version twice: reads must not depend on write order.
      await store.upsert('author_metrics', [metricsRow(3, D0 + 2 * H, 0.7), metricsRow(1, D0, 0.5)]);
      await store.upsert('author_metrics', [metricsRow(2, D0 + H, 0.6), metricsRow(1, D0, 0.5)]);
      await store.upsert('cohorts', [
        cohortRow('cohort_auto', 1, { kind: 'auto', rule: 'top-hit-rate' }),
        cohortRow('cohort_mine', 1, { owner_key_id: 'key_a' }),
        cohortRow('cohort_team', 1, { owner_key_id: 'key_b', team_id: 'team_x' }),
        cohortRow('cohort_other', 1, { owner_key_id: 'key_c', team_id: 'team_y' }),
        cohortRow('cohort_gone', 1, { owner_key_id: 'key_a' }),
      ]);
      await store.upsert('cohorts', [cohortRow('cohort_gone', 2, { owner_key_id: 'key_a', deleted: true })]);
      await store.upsert('cohort_events', [
        eventRow('cev_01', 'cohort_team', D0 + H),
        eventRow('cev_02', 'cohort_team', D0 + 3 * H),
        eventRow('cev_03', 'cohort_other', D0 + 2 * H),
      ]);
      await store.upsert('narrative_buckets', narrativeRows());
    });

    afterAll(async () => {
      await cleanup?.();
    });

    describe('authorMetrics', () => {
      it('returns the latest version at or before the time asked, never a later one', async () => {
        expect(await served.authorMetrics('@Alice', D0 + 90 * 60_000)).toMatchObject({ version: 2, hitRate: 0.6, ts: D0 + H });
        expect(await served.authorMetrics('alice', D0 + H)).toMatchObject({ version: 2 });
        expect(await served.authorMetrics('Alice', D0 + H - 1)).toMatchObject({ version: 1 });
        expect(await served.authorMetrics('@alice', D0 - 1)).toBeNull();
      });

      it('defaults to the latest version and finds authors by id', async () => {
        const latest = await served.authorMetrics('a1');
        expect(latest).toMatchObject({ authorId: 'a1', handle: 'Alice', version: 3, callsTotal: 30, confidence: 'MEDIUM' });
        expect(latest?.sectorStrength).toEqual([
          { narrative: 'ai-agents', samples: 8, hitRate: 0.5, medianReturn24h: null, relativeHitRate: 0.1 },
        ]);
        expect(await served.authorMetrics('@nobody')).toBeNull();
        expect(await served.authorMetrics('@')).toBeNull();
      });
    });

    describe('cohorts', () => {
      const ids = (list: { cohortId: string }[]): string[] => list.map((c) => c.cohortId);

      it('shows auto cohorts to everyone and manual ones to their owner and shared team, never deleted ones', async () => {
        const viewer = { viewerKeyId: 'key_a', viewerTeamId: 'team_x' };
        expect(ids(await listCohorts(store, { ...viewer, kind: 'all' }))).toEqual(['cohort_auto', 'cohort_mine', 'cohort_team']);
        expect(ids(await listCohorts(store, { ...viewer, kind: 'manual' }))).toEqual(['cohort_mine', 'cohort_team']);
        expect(ids(await listCohorts(store, { ...viewer, kind: 'auto' }))).toEqual(['cohort_auto']);
        expect(ids(await listCohorts(store, { viewerKeyId: 'key_c', kind: 'all' }))).toEqual(['cohort_auto', 'cohort_other']);
        expect(ids(await listCohorts(store, { viewerKeyId: 'key_z', viewerTeamId: null, kind: 'all' }))).toEqual(['cohort_auto']);
      });

      it('gives a visible cohort with its convergence events, newest first, and null otherwise', async () => {
        const viewer = { viewerKeyId: 'key_a', viewerTeamId: 'team_x' };
        const team = await getCohort(store, 'cohort_team', viewer);
        expect(team).toMatchObject({ cohortId: 'cohort_team', kind: 'manual', ownerKeyId: 'key_b', teamId: 'team_x' });
        expect(team?.members).toEqual([{ authorId: 'a1', handle: 'Alice' }]);
        expect(team?.convergenceEvents.map((e) => e.eventId)).toEqual(['cev_02', 'cev_01']);
        expect(team?.convergenceEvents[0]).toMatchObject({ members: ['a1', 'a2', 'a3'], score: 72.5, memberCount: 3 });
        expect(await getCohort(store, 'cohort_other', viewer)).toBeNull();
        expect(await getCohort(store, 'cohort_gone', viewer)).toBeNull();
        expect(await getCohort(store, 'cohort_missing', viewer)).toBeNull();
        expect((await getCohort(store, 'cohort_auto', { viewerKeyId: 'key_z' }))?.convergenceEvents).toEqual([]);
      });

      it("sums a set of authors' mentions in a window: totals and the most mentioned tokens", async () => {
        const mention = (n: number, author: string, token: string, ts: number): MentionRow => ({
          mention_id: `mn_${n}`,
          post_id: `p${n}`,
          author_id: author,
          author_handle: author,
          token_id: token,
          ref: token,
          ref_kind: 'id',
          post_kind: 'post',
          engagement: 0,
          ts,
        });
        await store.upsert('mentions', [
          mention(1, 'a1', 'tk_a', D0 + 1),
          mention(2, 'a1', 'tk_a', D0 + 2),
          mention(3, 'a2', 'tk_a', D0 + 3),
          mention(4, 'a2', 'tk_b', D0 + H),
          mention(5, 'a3', 'tk_c', D0 + 4),
          // Outside the window (from exclusive, to inclusive) or by someone else.
          mention(6, 'a1', 'tk_b', D0),
          mention(7, 'a1', 'tk_b', D0 + H + 1),
          mention(8, 'zz', 'tk_a', D0 + 5),
        ]);
        expect(await collectiveActivity(store, ['a1', 'a2', 'a3', 'a1'], D0, D0 + H)).toEqual({
          from: D0,
          to: D0 + H,
          mentions: 5,
          activeAuthors: 3,
          tokenCount: 3,
          topTokens: [
            { tokenId: 'tk_a', mentions: 3, authors: 2 },
            { tokenId: 'tk_b', mentions: 1, authors: 1 },
            { tokenId: 'tk_c', mentions: 1, authors: 1 },
          ],
        });
        expect((await collectiveActivity(store, ['a1', 'a2'], D0, D0 + H, 1)).topTokens).toEqual([{ tokenId: 'tk_a', mentions: 3, authors: 2 }]);
        expect(await collectiveActivity(store, ['nobody'], D0, D0 + H)).toMatchObject({ mentions: 0, activeAuthors: 0, tokenCount: 0, topTokens: [] });
        expect(await collectiveActivity(store, [], D0, D0 + H)).toMatchObject({ mentions: 0, topTokens: [] });
      });
    });

    describe('narratives', () => {
      it('has no rotation window before any bucket', async () => {
        const { store: empty, cleanup: done } = await factory();
        try {
          expect(await rotation(empty, '24h')).toEqual({ window: '24h', from: null, to: null, narratives: [] });
        } finally {
          await done();
        }
      });

      it('maps each narrative to its latest bucket', async () => {
        const map = await narrativeMap(store);
        expect(map.map((n) => [n.narrative, n.bucketStart])).toEqual([
          ['ai-agents', D0 + 47 * H],
          ['defi', D0 + 46 * H],
          ['memes', D0 + 47 * H],
        ]);
        expect(map[1]).toMatchObject({ attentionShare: 0.5, mentions: 4, theses: 4, uniqueAuthors: 1 });
        expect(map[1].topTokens).toEqual([{ tokenId: 'tk_a', symbol: 'A', mentions: 4 }]);
        expect(map[1].topContributors).toEqual([{ authorId: 'u1', handle: 'u1', posts: 1 }]);
        expect(await getNarrative(store, 'defi')).toEqual(map[1]);
        expect(await getNarrative(store, 'unknown')).toBeNull();
      });

      it('computes 24h rotation from hourly sums, each hour total counted once', async () => {
        const r = await rotation(store, '24h');
        expect([r.from, r.to]).toEqual([D0 + 24 * H, D0 + 48 * H]);
        // Current window: 23 hours of 4 mentions plus hour 46 with 8 → 100; previous: 24 × 4 = 96.
        expect(r.narratives.map((n) => n.narrative)).toEqual(['ai-agents', 'defi', 'memes']);
        const [ai, defi, memes] = r.narratives;
        expect(ai.share).toBeCloseTo(72 / 100, 12);
        expect(ai.previousShare).toBeCloseTo(24 / 96, 12);
        expect(ai.change).toBeCloseTo(0.72 - 0.25, 12);
        expect(defi.share).toBeCloseTo(0.04, 12);
        expect(defi.previousShare).toBe(0);
        // memes is missing at hour 30 yet measured against all 100 mentions.
        expect(memes.share).toBeCloseTo(23 / 100, 12);
        expect(memes.change).toBeCloseTo(0.23 - 0.75, 12);
      });

      it('has no 7d change without a previous week', async () => {
        const r = await rotation(store, '7d');
        const ai = r.narratives.find((n) => n.narrative === 'ai-agents');
        expect(ai?.share).toBeCloseTo((24 + 72) / (96 + 100), 12);
        expect(ai?.previousShare).toBeNull();
        expect(ai?.change).toBeNull();
      });

      it('builds an hourly theses heatmap with missing hours as zeros', async () => {
        const map = await heatmap(store, { metric: 'theses', bucket: '1h', range: '48h' });
        expect(map.bucketStarts).toHaveLength(48);
        expect(map.bucketStarts[0]).toBe(D0);
        const [ai, defi, memes] = map.rows;
        expect(map.rows.map((r) => r.narrative)).toEqual(['ai-agents', 'defi', 'memes']);
        expect(ai.values.slice(0, 4)).toEqual([0, 1, 2, 0]);
        expect(ai.intensity.slice(0, 4)).toEqual([0, 0.5, 1, 0]);
        expect(memes.values[30]).toBe(0);
        expect(memes.values[10]).toBe(6);
        expect(memes.intensity[10]).toBe(1);
        expect(memes.intensity[11]).toBeCloseTo(1 / 3, 12);
        expect(defi.values).toEqual([...Array<number>(46).fill(0), 4, 0]);
        expect(defi.intensity[46]).toBe(1);
      });

      it('adds theses up over 6h columns', async () => {
        const map = await heatmap(store, { metric: 'theses', bucket: '6h', range: '48h' });
        expect(map.bucketStarts).toEqual(Array.from({ length: 8 }, (_, i) => D0 + i * 6 * H));
        const [ai, defi, memes] = map.rows;
        expect(ai.values).toEqual([6, 6, 6, 6, 6, 6, 6, 6]);
        expect(ai.intensity).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
        expect(memes.values).toEqual([12, 16, 12, 12, 12, 10, 12, 12]);
        expect(memes.intensity).toEqual([0.75, 1, 0.75, 0.75, 0.75, 0.625, 0.75, 0.75]);
        expect(defi.values).toEqual([0, 0, 0, 0, 0, 0, 0, 4]);
        expect(defi.intensity).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
      });

      it('takes hourly author growth as stored and computes 6h growth from distinct authors', async () => {
        const hourly = await heatmap(store, { metric: 'author_growth', bucket: '1h', range: '48h' });
        const aiHourly = hourly.rows.find((r) => r.narrative === 'ai-agents');
        expect(aiHourly?.values.slice(0, 3)).toEqual([null, 0.01, 0.02]);
        expect(aiHourly?.intensity[47]).toBe(1);
        expect(aiHourly?.intensity[0]).toBe(0);

        const coarse = await heatmap(store, { metric: 'author_growth', bucket: '6h', range: '48h' });
        const ai = coarse.rows.find((r) => r.narrative === 'ai-agents');
        // 1 distinct author per 6h before hour 24, 2 after; baseline: the up to 4 columns before.
        const expected = [null, 0, 0, 0, 3 / 2 - 1, 3 / 2.25 - 1, 3 / 2.5 - 1, 3 / 2.75 - 1];
        expect(ai?.values.map((v) => (v === null ? null : Number(v.toFixed(12))))).toEqual(
          expected.map((v) => (v === null ? null : Number(v.toFixed(12)))),
        );
        expect(ai?.intensity[4]).toBe(1);
        expect(ai?.intensity[5]).toBeCloseTo((3 / 2.25 - 1) / 0.5, 12);
        expect(ai?.intensity[0]).toBe(0);
      });
    });

    describe('projections', () => {
      const meta = (topic: string): RecordMeta => ({ topic, partition: 0, offset: 0, key: null, timestamp: D0 });

      it('map every social record onto rows the store accepts', async () => {
        const metrics: AuthorMetrics = {
          authorId: 'a9',
          handle: 'Zed',
          ts: D0,
          version: 1,
          modelVersion: 'm1',
          callsTotal: 1,
          callsUnpriced: 0,
          resolvedCalls: 1,
          hits: 1,
          hitRate: 1,
          hitRateLow: 0.2,
          hitRateHigh: 1,
          leadTimeSamples: 1,
          medianLeadTimeMs: 5,
          falsePositiveRate: 0,
          medianMaxDrawdown24h: -0.2,
          medianReturn24h: 0.1,
          consistency: null,
          activeWeeks: 1,
          outcomeVolatility: null,
          sectorStrength: [],
          researchScore: null,
          confidence: 'LOW',
          confidenceReason: 'few calls',
        };
        const cohort: CohortVersion = {
          cohortId: 'cohort_zed',
          kind: 'manual',
          name: 'zed',
          ownerKeyId: 'key_z',
          teamId: null,
          members: [{ authorId: null, handle: 'zed' }],
          version: 1,
          ts: D0,
          rule: 'manual',
          deleted: false,
          commandId: 'cmd1',
        };
        const event: ConvergenceEvent = {
          eventId: 'cev_99',
          cohortId: 'cohort_zed',
          cohortKind: 'manual',
          cohortName: 'zed',
          cohortVersion: 1,
          ownerKeyId: 'key_z',
          teamId: null,
          tokenId: 'tk_z',
          ts: D0,
          memberCount: 2,
          cohortSize: 2,
          windowMinutes: 30,
          members: ['a9', 'a8'],
          score: 40,
        };
        const bucket: NarrativeBucket = {
          narrative: 'zed-sector',
          bucketStart: D0 - 100 * H,
          ts: D0 - 99 * H,
          theses: 1,
          mentions: 1,
          totalMentions: 2,
          uniqueAuthors: 1,
          newAuthors: 1,
          authorIds: ['a9'],
          authorGrowth: null,
          attentionShare: 0.5,
          attentionShare24h: 0.5,
          attentionShareChange24h: null,
          topTokens: [],
          topContributors: [],
        };
        const outcome: Outcome = {
          outcomeId: 'out_01',
          subjectKind: 'call',
          subjectId: 'call_01',
          tokenId: 'tk_z',
          subjectTs: D0,
          horizon: '1h',
          entryPrice: 2,
          forwardReturn: 0.5,
          maxDrawdown: -0.1,
          peakReturn: 0.6,
          timeToPeakMs: 1000,
          died: false,
          lastPrice: 3,
          resolvedAt: D0 + H,
        };
        for (const r of authorMetricsProjection.toRows(metrics, meta('quant.author-metrics'))) await store.upsert(r.table, [r.row]);
        for (const r of cohortsProjection.toRows(cohort, meta('quant.cohorts'))) await store.upsert(r.table, [r.row]);
        for (const r of cohortEventsProjection.toRows(event, meta('quant.cohort-events'))) await store.upsert(r.table, [r.row]);
        for (const r of narrativesProjection.toRows(bucket, meta('quant.narratives'))) await store.upsert(r.table, [r.row]);
        for (const r of outcomesProjection.toRows(outcome, meta('quant.outcomes'))) await store.upsert(r.table, [r.row]);

        expect(await served.authorMetrics('@zed')).toEqual(metrics);
        expect(await getCohort(store, 'cohort_zed', { viewerKeyId: 'key_z' })).toMatchObject({
          members: [{ authorId: null, handle: 'zed' }],
          convergenceEvents: [{ eventId: 'cev_99', members: ['a9', 'a8'], score: 40 }],
        });
        expect(await getNarrative(store, 'zed-sector')).toMatchObject({ attentionShare: 0.5, authorGrowth: null });
        expect(await store.query(sql`SELECT ${columns(outcomes)} FROM ${table(outcomes)}`)).toEqual([
          {
            outcome_id: 'out_01',
            subject_kind: 'call',
            subject_id: 'call_01',
            token_id: 'tk_z',
            subject_ts: D0,
            horizon: '1h',
            entry_price: 2,
            forward_return: 0.5,
            max_drawdown: -0.1,
            peak_return: 0.6,
            time_to_peak_ms: 1000,
            died: false,
            last_price: 3,
            resolved_at: D0 + H,
          },
        ]);
      });
    });
  });
}
