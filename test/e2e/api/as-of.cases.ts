import { describe, expect, it } from 'vitest';
import { column, columns, sql, table } from '../../../infra/store/sql-literal.ts';
import { snapshotHistoryRange } from '../../../projections/read-models/as-of.ts';
import { tokens, type TokenRow } from '../../../presenters/tokens-table.ts';
import { signals, snapshotRecords, type SignalRow } from '../../../projections/tables/quant.ts';
import { authorMetrics } from '../../../projections/tables/social.ts';
import type { QuantSnapshot } from '../../../schemas/records/quant-scores.ts';
import type { ApiWorld } from '../../helpers/api-world.ts';

/** `as_of` on every projection read: answers as of a time, the range it may name, the cursor rule. */

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The GET reads of projections, each once without `as_of`; asked again with the `as_of` it
 * answered with, each must give the same body.
 */
const READS = [
  '/v1/quant/tokens?limit=100',
  '/v1/quant/tokens?sort=crowding&dir=asc&limit=7',
  '/v1/quant/signals?limit=50',
  '/v1/quant/signals?status=active&limit=50',
  '/v1/quant/narratives',
  '/v1/quant/narratives/rotation?window=24h',
  '/v1/quant/narratives/heatmap?metric=author_growth&bucket=6h&range=48h',
  '/v1/quant/cohorts?kind=auto',
];

export function asOfCases(world: () => ApiWorld): void {
  const get = (path: string, key?: string) => world().request('GET', path, key === undefined ? {} : { key });
  const withAsOf = (path: string, asOf: string) => `${path}${path.includes('?') ? '&' : '?'}as_of=${encodeURIComponent(asOf)}`;

  describe('as_of', () => {
    it('gives every read its as_of, and the same answer when asked again as of it, as ISO-8601 or unix seconds', async () => {
      const firstSignal = (await get('/v1/quant/signals?limit=1')).body.data[0].id as string;
      const token = (await get('/v1/quant/tokens?limit=1')).body.data[0].token_id as string;
      const [{ handle }] = await world().store.query<{ handle: string }>(sql`SELECT min(${column(authorMetrics, 'handle')}) AS handle FROM ${table(authorMetrics)}`);
      const slug = (await get('/v1/quant/narratives')).body.data[0].slug as string;
      const paths = [...READS, `/v1/quant/signals/${firstSignal}`, `/v1/quant/users/@${handle}`, `/v1/quant/narratives/${slug}`, '/v1/quant/cohorts/cohort_top-research'];
      for (const path of paths) {
        const live = await get(path);
        expect(live.status, path).toBe(200);
        expect(live.body.as_of, path).toEqual(expect.any(String));
        const seconds = Date.parse(live.body.as_of) / 1000;
        for (const asOf of [live.body.as_of, String(seconds)]) {
          const again = await get(withAsOf(path, asOf));
          expect(again.status, `${path} as of ${asOf}`).toBe(200);
          expect(again.body, `${path} as of ${asOf}`).toEqual(live.body);
        }
      }
      // The token snapshot and its analogs: as of the snapshot time; freshness.age_ms counts up to as_of.
      const snapshot = await get(`/v1/quant/token/${token}`);
      expect(snapshot.body.as_of).toBe(snapshot.body.ts);
      const past = await get(withAsOf(`/v1/quant/token/${token}`, snapshot.body.as_of));
      const { freshness: liveFreshness, ...liveRest } = snapshot.body;
      const { freshness: pastFreshness, ...pastRest } = past.body;
      expect(pastRest).toEqual(liveRest);
      expect(pastFreshness.age_ms).toBe(0);
      expect({ ...pastFreshness, age_ms: 0, stale: null, stale_reasons: null }).toEqual({ ...liveFreshness, age_ms: 0, stale: null, stale_reasons: null });
      const analogs = await get(`/v1/quant/token/${token}/analogs?k=5`);
      expect(analogs.body.as_of).toBe(analogs.body.snapshot_ts);
      expect((await get(withAsOf(`/v1/quant/token/${token}/analogs?k=5`, analogs.body.as_of))).body).toEqual(analogs.body);
    });

    it("gives a token's snapshot in effect at a past time, and 404 before its first", async () => {
      const token = (await get('/v1/quant/tokens?limit=1')).body.data[0].token_id as string;
      const records = await world().store.query<{ ts: number; snapshot: string }>(
        sql`SELECT ${columns(snapshotRecords, ['ts', 'snapshot'])} FROM ${table(snapshotRecords)} WHERE ${column(snapshotRecords, 'token_id')} = ${token}
            ORDER BY ${column(snapshotRecords, 'ts')}`,
      );
      expect(records.length).toBeGreaterThan(2);
      const middle = records[Math.floor(records.length / 2)];
      const stored = JSON.parse(middle.snapshot) as QuantSnapshot;
      // A minute after it, before the next: that snapshot is the one in effect.
      const res = await get(withAsOf(`/v1/quant/token/${token}`, iso(middle.ts + 60_000)));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: stored.snapshotId, ts: iso(stored.ts), as_of: iso(middle.ts + 60_000), scores: stored.scores });
      expect(res.body.freshness.age_ms).toBe(60_000);
      // A token listed with no snapshot by then: 404, as without as_of.
      const [meta] = await world().store.query<TokenRow>(sql`SELECT ${columns(tokens)} FROM ${table(tokens)} WHERE ${column(tokens, 'token_id')} = ${token}`);
      await world().store.upsert('tokens', [{ ...meta, token_id: 'tk_asOfNoSnapshot', symbol: 'ASOFNOSNAP', address: `0x${'3'.repeat(40)}`, chain: 'eth' }]);
      const none = await get(withAsOf('/v1/quant/token/tk_asOfNoSnapshot', iso(middle.ts)));
      world().expectError(none, 404, 'NOT_FOUND');
      expect(none.body.error.message).toContain(`had no quant snapshot yet at ${iso(middle.ts)}`);
    });

    it('shows a signal that ended later as active at a time between its firing and its end', async () => {
      const [row] = await world().store.query<SignalRow>(
        sql`SELECT ${columns(signals)} FROM ${table(signals)} WHERE ${column(signals, 'status')} = 'ended' ORDER BY ${column(signals, 'fired_at')} LIMIT 1`,
      );
      if (row === undefined || row.ended_at === null) return expect.fail('the world has an ended signal');
      const id = row.signal_id;
      const between = iso(row.fired_at + 1);
      const then = await get(withAsOf(`/v1/quant/signals/${id}`, between));
      expect(then.body).toMatchObject({ id, status: 'active', ended_at: null, end_reason: null, as_of: between });
      expect((await get(`/v1/quant/signals/${id}`)).body).toMatchObject({ id, status: 'ended', ended_at: iso(row.ended_at) });
      world().expectError(await get(withAsOf(`/v1/quant/signals/${id}`, iso(row.fired_at - 1))), 404, 'NOT_FOUND');
      // In the feed as of then, it is active too, and so counts as active.
      const active = await get(withAsOf('/v1/quant/signals?status=active&limit=100', between));
      expect(active.body.data.find((s: any) => s.id === id)).toMatchObject({ status: 'active', ended_at: null });
      expect(active.body.data.every((s: any) => Date.parse(s.fired_at) <= row.fired_at + 1)).toBe(true);
    });

    it('refuses an as_of before the first data, in the future or malformed, naming the available range', async () => {
      const { first } = await snapshotHistoryRange(world().store);
      if (first === null) return expect.fail('the world has snapshots');
      const paths = ['/v1/quant/tokens', '/v1/quant/signals', '/v1/quant/narratives', `/v1/quant/token/${(await get('/v1/quant/tokens?limit=1')).body.data[0].token_id}`];
      for (const path of paths) {
        const before = await get(withAsOf(path, iso(first - 1000)));
        world().expectError(before, 400, 'VALIDATION');
        expect(before.body.error.message).toContain(`the available range is ${iso(first)} to `);
        expect(before.body.error.details.issues).toEqual([expect.objectContaining({ path: 'query.as_of', code: 'too_small', minimum: first / 1000 })]);
        const future = await get(withAsOf(path, iso(Date.now() + 365 * 86_400_000)));
        world().expectError(future, 400, 'VALIDATION');
        expect(future.body.error.message).toContain('in the future');
        expect(future.body.error.details.issues[0]).toMatchObject({ path: 'query.as_of', code: 'too_big', maximum: expect.any(Number) });
        const garbage = await get(withAsOf(path, 'yesterday'));
        world().expectError(garbage, 400, 'VALIDATION');
        expect(garbage.body.error.details.issues[0].path).toBe('query.as_of');
      }
    });

    it("holds the Free plan's scanner to its delay: no as_of later than its delayed now", async () => {
      const scan = (body: unknown, key: string) => world().request('POST', '/v1/quant/scan', { body, key });
      const { first } = await snapshotHistoryRange(world().store);
      const recent = iso(world().endMs - 60_000);
      const late = await scan({ preset: 'broad-momentum', as_of: recent }, world().keys.free);
      world().expectError(late, 400, 'VALIDATION');
      expect(late.body.error.message).toContain("less the plan's 15-minute delay");
      expect(late.body.error.details.issues[0]).toMatchObject({ path: 'body.as_of', code: 'too_big' });
      const paid = await scan({ preset: 'broad-momentum', as_of: recent }, world().keys.pro);
      expect(paid.status).toBe(200);
      expect(paid.body.as_of).toBe(recent);
      const earlier = iso((first ?? 0) + 86_400_000);
      const free = await scan({ preset: 'broad-momentum', as_of: earlier }, world().keys.free);
      expect(free.status).toBe(200);
      expect(free.body.data).toEqual((await scan({ preset: 'broad-momentum', as_of: earlier }, world().keys.pro)).body.data);
    });

    it('carries the first page\'s as_of in the cursor: the same as_of with it is accepted, another refused on query.cursor', async () => {
      const first = await get('/v1/quant/tokens?limit=3');
      const cursor = encodeURIComponent(first.body.next_cursor);
      const same = await get(`/v1/quant/tokens?limit=3&cursor=${cursor}&as_of=${encodeURIComponent(first.body.as_of)}`);
      expect(same.status).toBe(200);
      expect(same.body.as_of).toBe(first.body.as_of);
      const other = await get(`/v1/quant/tokens?limit=3&cursor=${cursor}&as_of=${encodeURIComponent(iso(Date.parse(first.body.as_of) - 3_600_000))}`);
      world().expectError(other, 400, 'VALIDATION');
      expect(other.body.error.details.issues[0].path).toBe('query.cursor');
      const feed = await get('/v1/quant/signals?limit=2');
      const otherFeed = await get(`/v1/quant/signals?limit=2&cursor=${encodeURIComponent(feed.body.next_cursor)}&as_of=${encodeURIComponent(iso(Date.parse(feed.body.as_of) - 60_000))}`);
      world().expectError(otherFeed, 400, 'VALIDATION');
    });
  });
}
