import { describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../../api/http/body.ts';
import { columns, sql, table } from '../../../infra/store/sql-literal.ts';
import { tokens, type TokenRow } from '../../../presenters/tokens-table.ts';
import { latestSnapshotRow, snapshotHistoryRow, snapshotRecordRow } from '../../../projections/latest-snapshots.ts';
import { settledSnapshotTime } from '../../../projections/read-models/as-of.ts';
import { latestSnapshots, type LatestSnapshotRow } from '../../../projections/tables/quant.ts';
import type { QuantSnapshot } from '../../../schemas/records/quant-scores.ts';
import type { ApiWorld } from '../../helpers/api-world.ts';

/** What every endpoint shares: errors, methods, bodies, keys, and cursor pagination under writes. */
export function conventionCases(world: () => ApiWorld): void {
  describe('conventions', () => {
    it('answers an unknown path 404 NOT_FOUND, with a key or without', async () => {
      world().expectError(await world().request('GET', '/v1/quant/nothing-here'), 404, 'NOT_FOUND');
      world().expectError(await world().request('GET', '/v1/nothing', { key: null }), 404, 'NOT_FOUND');
    });

    it('answers a wrong method 405 METHOD_NOT_ALLOWED with an Allow header', async () => {
      const res = await world().request('DELETE', '/v1/quant/tokens');
      world().expectError(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.get('allow')).toContain('GET');
      const post = await world().request('GET', '/v1/quant/scan');
      world().expectError(post, 405, 'METHOD_NOT_ALLOWED');
      expect(post.headers.get('allow')).toContain('POST');
    });

    it('gives each request its own id', async () => {
      const a = await world().request('GET', '/v1/key');
      const b = await world().request('GET', '/v1/key');
      expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    });

    it('refuses unknown and repeated query parameters, listing each issue with its path', async () => {
      const res = await world().request('GET', '/v1/key?verbose=1&also=2');
      world().expectError(res, 400, 'VALIDATION');
      expect(res.body.error.details.issues.map((i: { path: string; code: string }) => [i.path, i.code]).sort()).toEqual([
        ['query.also', 'unrecognized_key'],
        ['query.verbose', 'unrecognized_key'],
      ]);
      const repeated = await world().request('GET', '/v1/quant/tokens?limit=2&limit=3');
      world().expectError(repeated, 400, 'VALIDATION');
      expect(repeated.body.error.details.issues).toContainEqual(expect.objectContaining({ path: 'query.limit', code: 'duplicate_parameter' }));
    });

    it('reports every problem of a request at once, with bounds and expected values', async () => {
      const res = await world().request('GET', '/v1/quant/tokens?limit=0&dir=up&q=' + 'x'.repeat(65));
      world().expectError(res, 400, 'VALIDATION');
      const byPath = Object.fromEntries(res.body.error.details.issues.map((i: { path: string }) => [i.path, i]));
      expect(byPath['query.limit']).toMatchObject({ code: 'too_small', minimum: 1, inclusive: true });
      expect(byPath['query.dir']).toMatchObject({ code: 'invalid_value', expected: 'asc | desc' });
      expect(byPath['query.q']).toMatchObject({ code: 'too_big', maximum: 64 });
    });

    it('refuses bodies that are too large (413), not JSON, or of another content type', async () => {
      const big = JSON.stringify({ preset: 'early-attention', pad: 'x'.repeat(MAX_BODY_BYTES) });
      world().expectError(await world().request('POST', '/v1/quant/scan', { rawBody: big }), 413, 'PAYLOAD_TOO_LARGE');
      const notJson = await world().request('POST', '/v1/quant/scan', { rawBody: '{"preset": ' });
      world().expectError(notJson, 400, 'VALIDATION');
      expect(notJson.body.error.details.issues[0]).toMatchObject({ path: 'body', code: 'invalid_json' });
      const form = await world().request('POST', '/v1/quant/scan', { rawBody: 'preset=early-attention', contentType: 'application/x-www-form-urlencoded' });
      world().expectError(form, 400, 'VALIDATION');
      expect(form.body.error.details.issues[0]).toMatchObject({ path: 'body', code: 'invalid_content_type' });
      const unknownField = await world().request('POST', '/v1/quant/scan', { body: { preset: 'early-attention', colour: 'red' } });
      world().expectError(unknownField, 400, 'VALIDATION');
      expect(unknownField.body.error.details.issues).toContainEqual(expect.objectContaining({ path: 'body.colour', code: 'unrecognized_key' }));
    });

    it('accepts a key in either header form, refuses missing, malformed and unknown keys (401) and a key without the scope (403)', async () => {
      const { key } = await world().createKey('pro', ['quant:read']);
      expect((await world().request('GET', '/v1/quant/tokens?limit=1', { key })).status).toBe(200);
      expect((await world().request('GET', '/v1/quant/tokens?limit=1', { key: null, headers: { 'x-api-key': key } })).status).toBe(200);
      world().expectError(await world().request('GET', '/v1/quant/tokens', { key: null }), 401, 'UNAUTHORIZED');
      world().expectError(await world().request('GET', '/v1/quant/tokens', { key: 'svc_live_short' }), 401, 'UNAUTHORIZED');
      world().expectError(await world().request('GET', '/v1/quant/tokens', { key: `svc_live_${'B'.repeat(43)}` }), 401, 'UNAUTHORIZED');
      world().expectError(await world().request('GET', '/v1/quant/signals', { key }), 403, 'FORBIDDEN');
      world().expectError(await world().request('GET', '/v1/key', { key }), 403, 'FORBIDDEN');
    });

    it('follows next_cursor to the end visiting every row once while newer snapshots arrive and move every sort value', async () => {
      const { store } = world();
      const narrative = 'pagination-check';
      const [template] = await store.query<LatestSnapshotRow>(sql`SELECT ${columns(latestSnapshots)} FROM ${table(latestSnapshots)} LIMIT 1`);
      const [tokenTemplate] = await store.query<TokenRow>(sql`SELECT ${columns(tokens)} FROM ${table(tokens)} WHERE token_id = ${template.token_id}`);
      const settled = await settledSnapshotTime(store);
      if (settled === null) return expect.fail('the world has snapshots');
      // The listing's time: after the settled time, so no snapshot this case writes is in what
      // other cases read live, and a time of this case's own (the history up to the settled time
      // is complete, and the API keeps its views of such times).
      const asOf = settled + 1_000;
      // Rows of a narrative of their own, so the other cases' counts are untouched; some momenta tie.
      // Written as the projections write a snapshot: the latest per token, and the history.
      const add = async (ids: string[], momentum: (i: number) => number | null, ts: number) => {
        const snapshots = ids.map((id, i): QuantSnapshot => {
          const snapshot = JSON.parse(template.snapshot) as QuantSnapshot;
          const snapshotId = `snap_${Buffer.from(`${id}@${ts}`).toString('hex')}`;
          return { ...snapshot, snapshotId, tokenId: id, ts, narrative, scores: { ...snapshot.scores, momentum: momentum(i) } };
        });
        await store.upsert('tokens', ids.map((id) => ({ ...tokenTemplate, token_id: id, narrative, symbol: `P${id.slice(-4).toUpperCase()}` })));
        await store.upsert('latest_snapshots', snapshots.map(latestSnapshotRow));
        await store.upsert('snapshot_history', snapshots.map(snapshotHistoryRow));
        await store.upsert('snapshot_records', snapshots.map(snapshotRecordRow));
      };
      const before = Array.from({ length: 20 }, (_, i) => `tk_pg${String(i).padStart(3, '0')}`);
      await add(before, (i) => (i % 5 === 4 ? null : Math.floor(i / 2) * 10), asOf);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = `/v1/quant/tokens?narrative=${narrative}&sort=momentum&dir=desc&limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : `&as_of=${asOf / 1000}`}`;
        const res = await world().request('GET', query);
        expect(res.status).toBe(200);
        expect(res.body.object).toBe('list');
        // Every page answers as of the first page's time.
        expect(res.body.as_of).toBe(new Date(asOf).toISOString());
        seen.push(...res.body.data.map((row: { token: { id: string } }) => row.token.id));
        cursor = res.body.next_cursor;
        expect(cursor === null).toBe(!res.body.has_more);
        pages++;
        // After the first page, new tokens arrive after the listing's time, one ahead of the reader
        // (momentum 5) and one behind it (99), and each later page finds every momentum moved by a
        // newer snapshot (the observed bug: the sort key moving between pages made a cursor skip
        // some tokens and repeat others).
        if (pages === 1) await add(['tk_pgnewa', 'tk_pgnewb'], (i) => (i === 0 ? 5 : 99), asOf + 1_000);
        await add(before, (i) => ((i * 37 + pages * 23) % 100), asOf + pages * 5 * 60_000);
      } while (cursor !== null);

      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual([...before].sort());
      // Nulls last, then by id.
      expect(seen.slice(-4)).toEqual(['tk_pg004', 'tk_pg009', 'tk_pg014', 'tk_pg019']);
    });

    it('refuses a cursor from another query with VALIDATION on query.cursor', async () => {
      const first = await world().request('GET', '/v1/quant/tokens?sort=momentum&limit=2');
      expect(first.body.next_cursor).toEqual(expect.any(String));
      const cursor = encodeURIComponent(first.body.next_cursor);
      for (const other of [`sort=crowding&limit=2&cursor=${cursor}`, `sort=momentum&dir=asc&limit=2&cursor=${cursor}`, `sort=momentum&chain=eth&limit=2&cursor=${cursor}`, 'cursor=garbage']) {
        const res = await world().request('GET', `/v1/quant/tokens?${other}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues[0].path).toBe('query.cursor');
      }
    });
  });
}
