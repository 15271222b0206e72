import { describe, expect, it } from 'vitest';
import { column, columns, int64, list, sql, table } from '../../../infra/store/sql-literal.ts';
import { AUTHOR_METRICS_MODEL, MIN_SECTOR_SAMPLES } from '../../../processors/quant-engine/authors/metrics.ts';
import { authorMetricsProjection } from '../../../projections/author-metrics.ts';
import { EARLY_MOVERS_ID, TOP_RESEARCH_ID } from '../../../processors/quant-engine/cohorts/cohorts.ts';
import { cohortsProjection } from '../../../projections/cohorts.ts';
import { mentions } from '../../../projections/tables.ts';
import { signals, type SignalRow } from '../../../projections/tables/quant.ts';
import {
  authorMetrics,
  cohortEvents,
  cohorts,
  narrativeBuckets,
  type AuthorMetricsRow,
  type CohortEventRow,
  type CohortRow,
  type NarrativeBucketRow,
} from '../../../projections/tables/social.ts';
import type { AuthorMetrics, CohortVersion } from '../../../schemas/records/quant-social.ts';
import type { ApiWorld } from '../../helpers/api-world.ts';

const HOUR = 3_600_000;

/** Authors, cohorts and narratives (spec 4.3), checked against the store. */
export function socialCases(world: () => ApiWorld): void {
  const query = <R extends Record<string, unknown>>(statement: ReturnType<typeof sql>) =>
    world().store.query<R & Record<string, string | number | boolean | null>>(statement);
  const issuePaths = (res: { body: any }) => res.body.error.details.issues.map((i: { path: string }) => i.path);

  describe('author metrics', () => {
    /** The latest metrics of the author with the most resolved calls. */
    async function richestAuthor(): Promise<AuthorMetricsRow> {
      const [best] = await query<AuthorMetricsRow>(
        sql`SELECT ${columns(authorMetrics)} FROM ${table(authorMetrics)}
            ORDER BY ${column(authorMetrics, 'resolved_calls')} DESC, ${column(authorMetrics, 'ts')} DESC LIMIT 1`,
      );
      const [latest] = await query<AuthorMetricsRow>(
        sql`SELECT ${columns(authorMetrics)} FROM ${table(authorMetrics)} WHERE ${column(authorMetrics, 'author_id')} = ${best.author_id}
            ORDER BY ${column(authorMetrics, 'ts')} DESC LIMIT 1`,
      );
      return latest;
    }

    it("gives an author's latest metrics as stored, the same with or without @ and in any case", async () => {
      const row = await richestAuthor();
      const res = await world().request('GET', `/v1/quant/users/${row.handle}`);
      expect(res.status).toBe(200);
      const m = res.body;
      expect(m).toEqual({
        object: 'author_metrics',
        dataset: 'live',
        livemode: true,
        author_id: row.author_id,
        handle: row.handle,
        as_of: new Date(row.ts).toISOString(),
        version_at: new Date(row.ts).toISOString(),
        model_version: row.model_version,
        calls: { total: row.calls_total, unpriced: row.calls_unpriced, resolved: row.resolved_calls, hits: row.hits },
        hit_rate: { value: row.hit_rate, low: row.hit_rate_low, high: row.hit_rate_high, confidence_level: 0.95 },
        median_lead_time_ms: row.median_lead_time_ms,
        lead_time_samples: row.lead_time_samples,
        false_positive_rate: row.false_positive_rate,
        median_max_drawdown_24h: row.median_max_drawdown24h,
        median_return_24h: row.median_return24h,
        consistency: row.consistency,
        active_weeks: row.active_weeks,
        outcome_volatility: row.outcome_volatility,
        sector_strength: (JSON.parse(row.sector_strength) as { narrative: string; samples: number; hitRate: number; medianReturn24h: number | null; relativeHitRate: number }[]).map(
          (s) => ({ narrative: s.narrative, samples: s.samples, hit_rate: s.hitRate, median_return_24h: s.medianReturn24h, relative_hit_rate: s.relativeHitRate }),
        ),
        research_score: row.research_score,
        confidence: row.confidence,
        confidence_reason: row.confidence_reason,
      });
      expect(m.hit_rate.low).toBeLessThanOrEqual(m.hit_rate.value);
      expect(m.hit_rate.high).toBeGreaterThanOrEqual(m.hit_rate.value);

      for (const form of [`@${row.handle}`, encodeURIComponent(`@${row.handle}`), row.handle.toUpperCase()]) {
        const again = await world().request('GET', `/v1/quant/users/${form}`);
        expect(again.body, form).toEqual(m);
      }
    });

    it('serves sector strength as recorded, only for narratives with at least 8 resolved calls', async () => {
      // Three days of the world give no author 8 resolved calls in one narrative, so an author
      // of its own gets a metrics version with a sector, projected as the engine's record would be.
      const sector = { narrative: 'ai-agents', samples: MIN_SECTOR_SAMPLES + 1, hitRate: 5 / 9, medianReturn24h: 0.125, relativeHitRate: 0.05 };
      const metrics: AuthorMetrics = {
        authorId: 'au_sectortest',
        handle: 'Sector_Tester',
        ts: world().endMs - HOUR,
        version: 1,
        modelVersion: AUTHOR_METRICS_MODEL,
        callsTotal: 12,
        callsUnpriced: 1,
        resolvedCalls: 11,
        hits: 6,
        hitRate: 6 / 11,
        hitRateLow: 0.28,
        hitRateHigh: 0.79,
        leadTimeSamples: 0,
        medianLeadTimeMs: null,
        falsePositiveRate: 1 / 11,
        medianMaxDrawdown24h: -0.08,
        medianReturn24h: 0.11,
        consistency: null,
        activeWeeks: 1,
        outcomeVolatility: 0.2,
        sectorStrength: [sector],
        researchScore: 61.5,
        confidence: 'MEDIUM',
        confidenceReason: '11 resolved calls; HIGH needs 30',
      };
      const meta = { topic: 'quant.author-metrics', partition: 0, offset: 0, key: metrics.authorId, timestamp: metrics.ts };
      await world().store.upsert('author_metrics', authorMetricsProjection.toRows(metrics, meta).map((r) => r.row as AuthorMetricsRow));
      const m = (await world().request('GET', '/v1/quant/users/@sector_tester')).body;
      expect(m).toMatchObject({ author_id: 'au_sectortest', handle: 'Sector_Tester', median_lead_time_ms: null, consistency: null, research_score: 61.5 });
      expect(m.sector_strength).toEqual([{ narrative: 'ai-agents', samples: 9, hit_rate: 5 / 9, median_return_24h: 0.125, relative_hit_rate: 0.05 }]);

      const rows = await query<{ sector_strength: string }>(sql`SELECT ${columns(authorMetrics, ['sector_strength'])} FROM ${table(authorMetrics)}`);
      const sectors = rows.flatMap((r) => JSON.parse(r.sector_strength) as { samples: number }[]);
      expect(sectors.every((s) => s.samples >= MIN_SECTOR_SAMPLES)).toBe(true);
    });

    it('shows null metrics as null with the reason, for an author without resolved calls', async () => {
      const [row] = await query<AuthorMetricsRow>(
        sql`SELECT ${columns(authorMetrics)} FROM ${table(authorMetrics)} WHERE ${column(authorMetrics, 'resolved_calls')} = ${int64(0)}
            AND ${column(authorMetrics, 'author_id')} NOT IN (SELECT ${column(authorMetrics, 'author_id')} FROM ${table(authorMetrics)} WHERE ${column(authorMetrics, 'resolved_calls')} > ${int64(0)})
            LIMIT 1`,
      );
      if (row === undefined) return expect.fail('the world has an author without resolved calls');
      const m = (await world().request('GET', `/v1/quant/users/${row.handle}`)).body;
      expect(m).toMatchObject({ hit_rate: null, false_positive_rate: null, research_score: null, confidence: 'LOW', sector_strength: [] });
      expect(m.confidence_reason).toEqual(expect.stringContaining('resolved call'));
    });

    it('answers an unknown author 404 and a malformed handle 400 on path.handle', async () => {
      world().expectError(await world().request('GET', '/v1/quant/users/@nobody_here_at_all'), 404, 'NOT_FOUND');
      for (const handle of ['@@double', 'has-dash', encodeURIComponent('with space'), 'x'.repeat(51)]) {
        const res = await world().request('GET', `/v1/quant/users/${handle}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(issuePaths(res)).toEqual(['path.handle']);
      }
    });
  });

  describe('cohorts', () => {
    const cohortIds = (res: { body: any }) => res.body.data.map((c: { id: string }) => c.id);

    it('lists the auto cohorts for every key, filtered by kind, with a total', async () => {
      const all = await world().request('GET', '/v1/quant/cohorts');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
      expect(all.body.total).toBe(all.body.data.length);
      expect(cohortIds(all)).toEqual(expect.arrayContaining([EARLY_MOVERS_ID, TOP_RESEARCH_ID]));
      const auto = await world().request('GET', '/v1/quant/cohorts?kind=auto');
      expect(auto.body.data.every((c: { kind: string }) => c.kind === 'auto')).toBe(true);
      expect(cohortIds(auto).sort()).toEqual([EARLY_MOVERS_ID, TOP_RESEARCH_ID].sort());
      const manual = await world().request('GET', '/v1/quant/cohorts?kind=manual');
      expect(manual.body.data.every((c: { kind: string }) => c.kind === 'manual')).toBe(true);
      expect([...cohortIds(auto), ...cohortIds(manual)].sort()).toEqual(cohortIds(all).sort());

      const [stored] = await query<CohortRow>(sql`SELECT ${columns(cohorts)} FROM ${table(cohorts)} WHERE ${column(cohorts, 'cohort_id')} = ${TOP_RESEARCH_ID}`);
      const listed = all.body.data.find((c: { id: string }) => c.id === TOP_RESEARCH_ID);
      const members = JSON.parse(stored.members) as { authorId: string | null; handle: string }[];
      expect(listed).toEqual({
        object: 'cohort',
        dataset: 'live',
        livemode: true,
        id: TOP_RESEARCH_ID,
        kind: 'auto',
        name: stored.name,
        rule: stored.rule,
        owner_key_id: null,
        team_id: null,
        version: stored.version,
        updated_at: new Date(stored.ts).toISOString(),
        member_count: members.length,
        members: members.map((m) => ({ author_id: m.authorId, handle: m.handle })),
      });

      const bad = await world().request('GET', '/v1/quant/cohorts?kind=some');
      world().expectError(bad, 400, 'VALIDATION');
      expect(issuePaths(bad)).toEqual(['query.kind']);
    });

    it('shows a manual cohort to the key that owns it and to no other key', async () => {
      const owner = await world().createKey('pro', ['quant:read']);
      const other = await world().createKey('pro', ['quant:read']);
      const [member] = await query<AuthorMetricsRow>(sql`SELECT ${columns(authorMetrics)} FROM ${table(authorMetrics)} LIMIT 1`);
      const cohortId = `cohort_manual_${owner.id}`;
      // The world runs no live quant engine, so the membership version it would publish for
      // `tqa cohorts create --owner <key id>` is projected directly.
      const version: CohortVersion = {
        cohortId,
        kind: 'manual',
        name: 'My watchlist',
        ownerKeyId: owner.id,
        teamId: null,
        members: [{ authorId: member.author_id, handle: member.handle }, { authorId: null, handle: 'not_seen_yet' }],
        version: 1,
        ts: world().endMs,
        rule: 'Members chosen by the owner.',
        deleted: false,
        commandId: 'cmd_test',
      };
      const meta = { topic: 'quant.cohorts', partition: 0, offset: 0, key: cohortId, timestamp: version.ts };
      for (const r of cohortsProjection.toRows(version, meta)) await world().store.upsert(r.table, [r.row]);

      const mine = await world().request('GET', '/v1/quant/cohorts?kind=manual', { key: owner.key });
      expect(cohortIds(mine)).toEqual([cohortId]);
      expect(mine.body.data[0]).toMatchObject({ owner_key_id: owner.id, member_count: 2, members: [{ author_id: member.author_id }, { author_id: null, handle: 'not_seen_yet' }] });
      expect(cohortIds(await world().request('GET', '/v1/quant/cohorts', { key: owner.key }))).toContain(cohortId);
      expect(cohortIds(await world().request('GET', '/v1/quant/cohorts', { key: other.key }))).not.toContain(cohortId);
      expect(cohortIds(await world().request('GET', '/v1/quant/cohorts?kind=manual', { key: other.key }))).toEqual([]);

      const detail = await world().request('GET', `/v1/quant/cohorts/${cohortId}`, { key: owner.key });
      expect(detail.status).toBe(200);
      expect(detail.body).toMatchObject({ id: cohortId, kind: 'manual', convergence_events: [], tokens: [], active_signals: [] });
      world().expectError(await world().request('GET', `/v1/quant/cohorts/${cohortId}`, { key: other.key }), 404, 'NOT_FOUND');

      for (const r of cohortsProjection.toRows({ ...version, version: 2, deleted: true }, meta)) await world().store.upsert(r.table, [r.row]);
      world().expectError(await world().request('GET', `/v1/quant/cohorts/${cohortId}`, { key: owner.key }), 404, 'NOT_FOUND');
    });

    it('shows a cohort shared with a team to every key of that team, and to no key of another team or none', async () => {
      const desk = await world().createTeam('desk');
      const rivals = await world().createTeam('rivals');
      const owner = await world().createKey('pro', ['quant:read'], 'desk owner', desk);
      const mate = await world().createKey('pro', ['quant:read'], 'desk mate', desk);
      const rival = await world().createKey('pro', ['quant:read'], 'rival', rivals);
      const loner = await world().createKey('pro', ['quant:read'], 'no team');
      // As the quant engine publishes `tqa cohorts create --owner <owner> --team <desk>` and a
      // cohort the owner keeps to himself (the world runs no live engine).
      const version = (cohortId: string, teamId: string | null): CohortVersion => ({
        cohortId,
        kind: 'manual',
        name: cohortId,
        ownerKeyId: owner.id,
        teamId,
        members: [{ authorId: null, handle: 'someone' }],
        version: 1,
        ts: world().endMs,
        rule: 'Members chosen by the owner.',
        deleted: false,
        commandId: `cmd_${cohortId}`,
      });
      const shared = `cohort_shared_${owner.id}`;
      const own = `cohort_own_${owner.id}`;
      for (const v of [version(shared, desk), version(own, null)]) {
        const meta = { topic: 'quant.cohorts', partition: 0, offset: 0, key: v.cohortId, timestamp: v.ts };
        for (const r of cohortsProjection.toRows(v, meta)) await world().store.upsert(r.table, [r.row]);
      }

      const visible = async (key: string) => cohortIds(await world().request('GET', '/v1/quant/cohorts', { key })).filter((id: string) => id === shared || id === own).sort();
      expect(await visible(owner.key)).toEqual([own, shared].sort());
      expect(await visible(mate.key)).toEqual([shared]);
      expect(await visible(rival.key)).toEqual([]);
      expect(await visible(loner.key)).toEqual([]);
      expect((await world().request('GET', `/v1/quant/cohorts/${shared}`, { key: mate.key })).body).toMatchObject({ id: shared, team_id: desk });
      world().expectError(await world().request('GET', `/v1/quant/cohorts/${own}`, { key: mate.key }), 404, 'NOT_FOUND');
      world().expectError(await world().request('GET', `/v1/quant/cohorts/${shared}`, { key: rival.key }), 404, 'NOT_FOUND');
      // Auto cohorts reach every key, with a team or without.
      for (const key of [mate.key, rival.key, loner.key]) {
        expect(cohortIds(await world().request('GET', '/v1/quant/cohorts?kind=auto', { key })).sort()).toEqual([EARLY_MOVERS_ID, TOP_RESEARCH_ID].sort());
      }
    });

    it('gives a cohort with its members, activity, tokens, active signals and convergence events from the store', async () => {
      const [withEvents] = await query<{ cohort_id: string }>(
        sql`SELECT ${column(cohortEvents, 'cohort_id')} AS cohort_id FROM ${table(cohortEvents)} GROUP BY ${column(cohortEvents, 'cohort_id')} ORDER BY count(*) DESC LIMIT 1`,
      );
      expect(withEvents, 'a cohort that converged').toBeDefined();
      const res = await world().request('GET', `/v1/quant/cohorts/${withEvents.cohort_id}`);
      expect(res.status).toBe(200);
      const c = res.body;

      const [stored] = await query<CohortRow>(sql`SELECT ${columns(cohorts)} FROM ${table(cohorts)} WHERE ${column(cohorts, 'cohort_id')} = ${withEvents.cohort_id}`);
      const members = JSON.parse(stored.members) as { authorId: string | null; handle: string }[];
      expect(c.members).toEqual(members.map((m) => ({ author_id: m.authorId, handle: m.handle })));

      const events = await query<CohortEventRow>(
        sql`SELECT ${columns(cohortEvents)} FROM ${table(cohortEvents)} WHERE ${column(cohortEvents, 'cohort_id')} = ${withEvents.cohort_id}`,
      );
      events.sort((a, b) => b.ts - a.ts || (a.event_id < b.event_id ? -1 : 1));
      const shown = events.slice(0, 50);
      expect(c.convergence_events.map((e: { id: string }) => e.id)).toEqual(shown.map((e) => e.event_id));
      expect(c.convergence_events[0]).toMatchObject({
        at: new Date(shown[0].ts).toISOString(),
        token: { id: shown[0].token_id },
        member_count: shown[0].member_count,
        cohort_size: shown[0].cohort_size,
        window_minutes: shown[0].window_minutes,
        members: JSON.parse(shown[0].members),
        score: shown[0].score,
      });

      const eventTokens = [...new Set(shown.map((e) => e.token_id))];
      expect(c.tokens.map((t: { token: { id: string } }) => t.token.id)).toEqual(eventTokens);
      for (const t of c.tokens) {
        const ofToken = shown.filter((e) => e.token_id === t.token.id);
        expect(t.convergence_events).toBe(ofToken.length);
        expect(t.last_converged_at).toBe(new Date(ofToken[0].ts).toISOString());
      }

      const active = await query<SignalRow>(
        sql`SELECT ${columns(signals)} FROM ${table(signals)} WHERE ${column(signals, 'status')} = 'active' AND ${column(signals, 'token_id')} IN ${list(eventTokens)}`,
      );
      expect(c.active_signals.map((s: { id: string }) => s.id).sort()).toEqual(active.map((s) => s.signal_id).sort().slice(0, 50));
      expect(c.active_signals.every((s: { status: string }) => s.status === 'active')).toBe(true);

      // Activity: the members' mentions in the window the response names.
      const a = c.collective_activity;
      expect(Date.parse(a.to) - Date.parse(a.from)).toBe(24 * HOUR);
      const ids = members.flatMap((m) => (m.authorId === null ? [] : [m.authorId]));
      const rows = await query<{ author_id: string; token_id: string }>(
        sql`SELECT ${columns(mentions, ['author_id', 'token_id'])} FROM ${table(mentions)}
            WHERE ${column(mentions, 'author_id')} IN ${list(ids)} AND ${column(mentions, 'ts')} > ${int64(Date.parse(a.from))} AND ${column(mentions, 'ts')} <= ${int64(Date.parse(a.to))}`,
      );
      expect(a.mentions).toBe(rows.length);
      expect(a.mentions).toBeGreaterThan(0);
      expect(a.active_members).toBe(new Set(rows.map((r) => r.author_id)).size);
      expect(a.token_count).toBe(new Set(rows.map((r) => r.token_id)).size);
      const top = a.top_tokens[0];
      expect(top.mentions).toBe(rows.filter((r) => r.token_id === top.token.id).length);
      expect(top.members).toBe(new Set(rows.filter((r) => r.token_id === top.token.id).map((r) => r.author_id)).size);
      for (let i = 1; i < a.top_tokens.length; i++) expect(a.top_tokens[i].mentions).toBeLessThanOrEqual(a.top_tokens[i - 1].mentions);
    });

    it('answers an unknown cohort 404 and a malformed id 400 on path.id', async () => {
      world().expectError(await world().request('GET', '/v1/quant/cohorts/cohort_nothing'), 404, 'NOT_FOUND');
      for (const id of ['nothing', 'cohort_', `cohort_${'x'.repeat(65)}`, 'cohort_a.b']) {
        const res = await world().request('GET', `/v1/quant/cohorts/${id}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(issuePaths(res)).toEqual(['path.id']);
      }
    });
  });

  describe('narratives', () => {
    async function latestBuckets(): Promise<Map<string, NarrativeBucketRow>> {
      const rows = await query<NarrativeBucketRow>(sql`SELECT ${columns(narrativeBuckets)} FROM ${table(narrativeBuckets)}`);
      const latest = new Map<string, NarrativeBucketRow>();
      for (const r of rows) if ((latest.get(r.narrative)?.bucket_start ?? -1) < r.bucket_start) latest.set(r.narrative, r);
      return latest;
    }

    it('maps every narrative to its latest hour, and serves each one by slug', async () => {
      const res = await world().request('GET', '/v1/quant/narratives');
      expect(res.status).toBe(200);
      const latest = await latestBuckets();
      expect(res.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null, total: latest.size });
      expect(res.body.data.map((n: { slug: string }) => n.slug)).toEqual([...latest.keys()].sort());
      for (const n of res.body.data) {
        const b = latest.get(n.slug)!;
        expect(n).toEqual({
          object: 'narrative',
          dataset: 'live',
          livemode: true,
          slug: b.narrative,
          bucket_start: new Date(b.bucket_start).toISOString(),
          attention_share: b.attention_share,
          attention_share_24h: b.attention_share24h,
          attention_share_change_24h: b.attention_share_change24h,
          theses: b.theses,
          mentions: b.mentions,
          unique_authors: b.unique_authors,
          new_authors: b.new_authors,
          author_growth: b.author_growth,
          top_tokens: (JSON.parse(b.top_tokens) as { tokenId: string; symbol: string | null; mentions: number }[]).map((t) => ({ token_id: t.tokenId, symbol: t.symbol, mentions: t.mentions })),
          top_contributors: (JSON.parse(b.top_contributors) as { authorId: string; handle: string; posts: number }[]).map((a) => ({ author_id: a.authorId, handle: a.handle, posts: a.posts })),
        });
        const one = await world().request('GET', `/v1/quant/narratives/${n.slug}`);
        expect(one.body).toEqual({ ...n, as_of: res.body.as_of });
      }
      expect(res.body.data.some((n: { attention_share_change_24h: number | null }) => n.attention_share_change_24h !== null)).toBe(true);
    });

    it('answers an unknown narrative 404 and a malformed slug 400 on path.slug', async () => {
      world().expectError(await world().request('GET', '/v1/quant/narratives/no-such-narrative'), 404, 'NOT_FOUND');
      for (const slug of ['Upper-Case', 'under_score', 'trailing-', encodeURIComponent('two words')]) {
        const res = await world().request('GET', `/v1/quant/narratives/${slug}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(issuePaths(res)).toEqual(['path.slug']);
      }
    });

    it('gives the rotation over 24h by default and over 7d, from the hourly buckets', async () => {
      const res = await world().request('GET', '/v1/quant/narratives/rotation');
      expect(res.status).toBe(200);
      const r = res.body;
      expect(r).toMatchObject({ object: 'narrative_rotation', window: '24h' });
      const latestStart = Math.max(...[...(await latestBuckets()).values()].map((b) => b.bucket_start));
      expect(Date.parse(r.to)).toBe(latestStart + HOUR);
      expect(Date.parse(r.to) - Date.parse(r.from)).toBe(24 * HOUR);
      // Current shares: each narrative's mentions over all mentions of the window.
      const rows = await query<NarrativeBucketRow>(
        sql`SELECT ${columns(narrativeBuckets)} FROM ${table(narrativeBuckets)}
            WHERE ${column(narrativeBuckets, 'bucket_start')} >= ${int64(Date.parse(r.from))} AND ${column(narrativeBuckets, 'bucket_start')} < ${int64(Date.parse(r.to))}`,
      );
      const totals = new Map(rows.map((b) => [b.bucket_start, b.total_mentions]));
      const total = [...totals.values()].reduce((s, t) => s + t, 0);
      for (const n of r.narratives) {
        const own = rows.filter((b) => b.narrative === n.slug).reduce((s, b) => s + b.mentions, 0);
        expect(n.share).toBeCloseTo(own / total, 12);
        if (n.change !== null) expect(n.change).toBeCloseTo(n.share - n.previous_share, 12);
      }
      const changes = r.narratives.map((n: { change: number | null }) => n.change).filter((c: number | null) => c !== null);
      expect(changes).toEqual([...changes].sort((a, b) => b - a));

      const week = await world().request('GET', '/v1/quant/narratives/rotation?window=7d');
      expect(week.body.window).toBe('7d');
      expect(Date.parse(week.body.to) - Date.parse(week.body.from)).toBe(7 * 24 * HOUR);
      // Three days of history: no week before the window, so no change.
      expect(week.body.narratives.every((n: { change: number | null }) => n.change === null)).toBe(true);

      const bad = await world().request('GET', '/v1/quant/narratives/rotation?window=30d');
      world().expectError(bad, 400, 'VALIDATION');
      expect(issuePaths(bad)).toEqual(['query.window']);
    });

    it('gives the heatmap with raw values and per-row intensity value / row max', async () => {
      const res = await world().request('GET', '/v1/quant/narratives/heatmap');
      expect(res.status).toBe(200);
      const h = res.body;
      expect(h).toMatchObject({ object: 'narrative_heatmap', metric: 'theses', bucket: '1h', range: '48h' });
      expect(h.columns).toHaveLength(48);
      for (let i = 1; i < h.columns.length; i++) expect(Date.parse(h.columns[i]) - Date.parse(h.columns[i - 1])).toBe(HOUR);
      expect(h.rows.length).toBeGreaterThan(0);
      for (const row of h.rows) {
        const max = Math.max(...row.values);
        expect(row.intensity).toEqual(row.values.map((v: number) => (max > 0 && v > 0 ? v / max : 0)));
        expect(row.intensity.every((x: number) => x >= 0 && x <= 1)).toBe(true);
      }
      // Raw values are the stored theses of each hour.
      const row = h.rows[0];
      const stored = await query<NarrativeBucketRow>(
        sql`SELECT ${columns(narrativeBuckets)} FROM ${table(narrativeBuckets)} WHERE ${column(narrativeBuckets, 'narrative')} = ${row.slug}`,
      );
      const byStart = new Map(stored.map((b) => [b.bucket_start, b.theses]));
      expect(row.values).toEqual(h.columns.map((c: string) => byStart.get(Date.parse(c)) ?? 0));

      const coarse = await world().request('GET', '/v1/quant/narratives/heatmap?metric=author_growth&bucket=6h&range=7d');
      expect(coarse.body).toMatchObject({ metric: 'author_growth', bucket: '6h', range: '7d' });
      expect(coarse.body.columns).toHaveLength(28);
      for (const c of coarse.body.columns) expect(Date.parse(c) % (6 * HOUR)).toBe(0);
      for (const r of coarse.body.rows) {
        const max = Math.max(0, ...r.values.map((v: number | null) => v ?? 0));
        expect(r.intensity).toEqual(r.values.map((v: number | null) => (v === null || v <= 0 || max === 0 ? 0 : v / max)));
      }
      expect(coarse.body.rows.some((r: { values: (number | null)[] }) => r.values.some((v) => v !== null && v > 0))).toBe(true);

      const daily = await world().request('GET', '/v1/quant/narratives/heatmap?bucket=1d&range=30d');
      expect(daily.body.columns).toHaveLength(30);

      const bad = await world().request('GET', '/v1/quant/narratives/heatmap?metric=likes&bucket=2h&range=1y');
      world().expectError(bad, 400, 'VALIDATION');
      expect(issuePaths(bad).sort()).toEqual(['query.bucket', 'query.metric', 'query.range']);
    });
  });
}
