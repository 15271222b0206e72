import { describe, expect, it } from 'vitest';
import { column, columns, sql, table } from '../../../infra/store/sql-literal.ts';
import { snapshotRecords } from '../../../projections/tables/quant.ts';
import type { QuantSnapshot } from '../../../schemas/records/quant-scores.ts';
import type { ApiWorld } from '../../helpers/api-world.ts';

/** GET /v1/quant/token/{token}/history: each point is the snapshot record in effect at its time, checked against the store. */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const FEATURES = ['unique_authors_1h', 'mentions_1h'];

export function historyCases(world: () => ApiWorld): void {
  const get = (path: string, key?: string) => world().request('GET', path, key === undefined ? {} : { key });

  /** A token of the list and every snapshot record of it, oldest first. */
  async function tokenWithRecords(): Promise<{ token: string; records: QuantSnapshot[] }> {
    const token = (await get('/v1/quant/tokens?limit=1')).body.data[0].token_id as string;
    const rows = await world().store.query<{ snapshot: string }>(
      sql`SELECT ${columns(snapshotRecords, ['snapshot'])} FROM ${table(snapshotRecords)} WHERE ${column(snapshotRecords, 'token_id')} = ${token}
          ORDER BY ${column(snapshotRecords, 'ts')}`,
    );
    return { token, records: rows.map((r) => JSON.parse(r.snapshot) as QuantSnapshot) };
  }

  /** The record in effect at `t`: the latest at or before it. */
  const inEffect = (records: QuantSnapshot[], t: number) => records.filter((r) => r.ts <= t).at(-1);

  /** Every page of a history query, following next_cursor. */
  async function allPages(path: string): Promise<any[]> {
    const points: any[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(cursor === null ? path : `${path}&cursor=${encodeURIComponent(cursor)}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      points.push(...res.body.data);
      cursor = res.body.next_cursor;
      expect(res.body.has_more).toBe(cursor !== null);
    } while (cursor !== null);
    return points;
  }

  describe('token history', () => {
    it('gives at each step the snapshot record in effect then, with its scores, the chosen features and the price', async () => {
      const { token, records } = await tokenWithRecords();
      expect(records.length).toBeGreaterThan(100);
      const first = records[0].ts;
      const latest = records.at(-1)!.ts;
      const res = await get(`/v1/quant/token/${token}/history?step=1h&from=${iso(first - DAY)}&features=${FEATURES.join(',')}&limit=1000`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', step: '1h', as_of: iso(latest), to: iso(latest), has_more: false, next_cursor: null });
      expect(res.body.token.id).toBe(token);
      const points = res.body.data as any[];
      // From the first hour at or after the token's first snapshot to the last hour at or before its latest.
      expect(points[0].ts).toBe(iso(Math.ceil(first / HOUR) * HOUR));
      expect(points.at(-1).ts).toBe(iso(Math.floor(latest / HOUR) * HOUR));
      for (const [i, point] of points.entries()) {
        const t = Date.parse(point.ts);
        if (i > 0) expect(t - Date.parse(points[i - 1].ts)).toBe(HOUR);
        const record = inEffect(records, t)!;
        expect(point).toEqual({
          ts: point.ts,
          snapshot_id: record.snapshotId,
          snapshot_ts: iso(record.ts),
          scores: record.scores,
          features: Object.fromEntries(FEATURES.map((f) => [f, record.features[f as keyof typeof record.features]])),
          price_usd: record.market.priceUsd,
        });
      }
    });

    it('pages forward in time with the cursor, visiting each step once', async () => {
      const { token, records } = await tokenWithRecords();
      const latest = records.at(-1)!.ts;
      const path = `/v1/quant/token/${token}/history?step=5m&from=${iso(latest - DAY)}`;
      const whole = (await get(`${path}&limit=1000`)).body.data as any[];
      expect(whole).toHaveLength(289);
      expect(await allPages(`${path}&limit=50`)).toEqual(whole);
      // A cursor continues only its own query.
      const cursor = (await get(`${path}&limit=50`)).body.next_cursor as string;
      const other = await get(`/v1/quant/token/${token}/history?step=1h&from=${iso(latest - DAY)}&limit=50&cursor=${encodeURIComponent(cursor)}`);
      world().expectError(other, 400, 'VALIDATION');
      expect(other.body.error.details.issues[0]).toMatchObject({ path: 'query.cursor', code: 'invalid_cursor' });
    });

    it('as of a past time ends there, with the points that were known then unchanged', async () => {
      const { token, records } = await tokenWithRecords();
      const latest = records.at(-1)!.ts;
      const asOf = latest - DAY + 17 * 60_000;
      const path = `/v1/quant/token/${token}/history?step=1h&from=${iso(latest - 2 * DAY)}&limit=1000`;
      const past = await get(`${path}&as_of=${iso(asOf)}`);
      expect(past.status).toBe(200);
      expect(past.body).toMatchObject({ as_of: iso(asOf), to: iso(asOf) });
      expect(Date.parse(past.body.data.at(-1).ts)).toBeLessThanOrEqual(asOf);
      for (const point of past.body.data) expect(Date.parse(point.snapshot_ts)).toBeLessThanOrEqual(Date.parse(point.ts));
      const live = (await get(path)).body.data as any[];
      expect(live.slice(0, past.body.data.length)).toEqual(past.body.data);
      // Without as_of the answer is as of the latest snapshot, and asking again as of it gives the same body.
      const now = await get(path);
      expect((await get(`${path}&as_of=${encodeURIComponent(now.body.as_of)}`)).body).toEqual(now.body);
      // Before the token's first snapshot there is no history of it yet.
      const tokenId = column(snapshotRecords, 'token_id');
      const [young] = await world().store.query<{ token_id: string; first: number }>(
        sql`SELECT ${tokenId} AS token_id, min(${column(snapshotRecords, 'ts')}) AS first FROM ${table(snapshotRecords)} GROUP BY ${tokenId} ORDER BY first DESC LIMIT 1`,
      );
      expect(young.first).toBeGreaterThan(records[0].ts);
      world().expectError(await get(`/v1/quant/token/${young.token_id}/history?as_of=${iso(young.first - 1)}`), 404, 'NOT_FOUND');
    });

    it("reaches back as far as the key's plan allows", async () => {
      const { token, records } = await tokenWithRecords();
      const latest = records.at(-1)!.ts;
      const free = world().keys.free;
      expect((await get('/v1/key', free)).body.plan_limits.features.history_days).toBe(1);
      const tooFar = await get(`/v1/quant/token/${token}/history?from=${iso(latest - 2 * DAY)}`, free);
      world().expectError(tooFar, 402, 'PLAN_REQUIRED');
      expect(tooFar.body.error.message).toContain('1 days back');
      // Without `from`, the default range stops at the plan's reach.
      const within = await get(`/v1/quant/token/${token}/history?step=1h`, free);
      expect(within.status).toBe(200);
      expect(within.body.from).toBe(iso(latest - DAY));
      expect(within.body.data).toHaveLength(Math.floor(latest / HOUR) - Math.ceil((latest - DAY) / HOUR) + 1);
      expect((await get(`/v1/quant/token/${token}/history?from=${iso(latest - 2 * DAY)}`, world().keys.team)).status).toBe(200);
    });

    it('refuses unknown features, a range that ends before it starts and unknown tokens', async () => {
      const { token, records } = await tokenWithRecords();
      const bad = await get(`/v1/quant/token/${token}/history?features=unique_authors_1h,popularity`);
      world().expectError(bad, 400, 'VALIDATION');
      expect(bad.body.error.details.issues[0].path).toMatch(/^query\.features/);
      const latest = records.at(-1)!.ts;
      const backwards = await get(`/v1/quant/token/${token}/history?from=${iso(latest - HOUR)}&to=${iso(latest - 2 * HOUR)}`);
      world().expectError(backwards, 400, 'VALIDATION');
      expect(backwards.body.error.details.issues[0].path).toBe('query.from');
      world().expectError(await get('/v1/quant/token/tk_noSuchToken/history'), 404, 'NOT_FOUND');
      world().expectError(await get(`/v1/quant/token/${token}/history?step=1w`), 400, 'VALIDATION');
    });
  });
}
