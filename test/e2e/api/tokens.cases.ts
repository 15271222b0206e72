import { describe, expect, it } from 'vitest';
import { SCAN_PRESET_NAMES, SCAN_PRESETS } from '../../../api/scan-presets.ts';
import { column, columns, int64, list, sql, table, type Sql } from '../../../infra/store/sql-literal.ts';
import { HORIZON_MS } from '../../../processors/quant-engine/contracts.ts';
import { FEATURE_NAMES } from '../../../processors/quant-engine/features/definitions.ts';
import { tokens, type TokenRow } from '../../../presenters/tokens-table.ts';
import { latestSnapshotRow } from '../../../projections/latest-snapshots.ts';
import { settledSnapshotTime } from '../../../projections/read-models/as-of.ts';
import {
  latestSnapshots,
  snapshotHistory,
  snapshotRecords,
  type LatestSnapshotRow,
  type RuleField,
  type SnapshotHistoryRow,
} from '../../../projections/tables/quant.ts';
import { outcomes, type OutcomeRow } from '../../../projections/tables/social.ts';
import { SCORE_NAMES } from '../../../schemas/records/primitives.ts';
import type { QuantSnapshot } from '../../../schemas/records/quant-scores.ts';
import type { ApiWorld } from '../../helpers/api-world.ts';

/** GET /v1/quant/token/{token}, …/analogs, GET /v1/quant/tokens and POST /v1/quant/scan, checked against the store. */

type Rule = { field: RuleField; op: '>' | '>=' | '<' | '<='; value: number };

const DAY = HORIZON_MS['24h'];
const iso = (ms: number) => new Date(ms).toISOString();

function passes(value: number | null, rule: Rule): boolean {
  if (value === null) return false;
  switch (rule.op) {
    case '>':
      return value > rule.value;
    case '>=':
      return value >= rule.value;
    case '<':
      return value < rule.value;
    case '<=':
      return value <= rule.value;
  }
}

/** A response row's value of a rule field (token_score: scores and features). */
const valueOf = (row: any, field: string): number | null => (field in row.scores ? row.scores[field] : row.features[field]);

/** Sorted by `field` in `dir` with nulls last, then by token id: the order the API promises. */
function expectOrdered(rows: any[], field: string, dir: 'asc' | 'desc'): void {
  for (let i = 1; i < rows.length; i++) {
    const [a, b] = [valueOf(rows[i - 1], field), valueOf(rows[i], field)];
    const label = `${field} ${dir} at ${i}: ${a} then ${b}`;
    if (a === null) {
      expect(b, label).toBeNull();
      expect(rows[i - 1].token_id < rows[i].token_id, label).toBe(true);
    } else if (b !== null) {
      expect(dir === 'desc' ? a >= b : a <= b, label).toBe(true);
      if (a === b) expect(rows[i - 1].token_id < rows[i].token_id, label).toBe(true);
    }
  }
}

export function tokenCases(world: () => ApiWorld): void {
  const store = () => world().store;
  const tokenRows = (where: Sql = sql`${true}`) =>
    store().query<TokenRow>(sql`SELECT ${columns(tokens)} FROM ${table(tokens)} WHERE ${where} ORDER BY ${column(tokens, 'token_id')}`);
  const latestRows = (where: Sql = sql`${true}`) =>
    store().query<LatestSnapshotRow>(sql`SELECT ${columns(latestSnapshots)} FROM ${table(latestSnapshots)} WHERE ${where}`);
  const snapshotOf = (row: LatestSnapshotRow) => JSON.parse(row.snapshot) as QuantSnapshot;
  /**
   * What the token list and the scan read live: each token's snapshot as of the settled time
   * of the history (the newest step may still be on its way in a running world), as rows of
   * latest_snapshots through the projection's own mapper.
   */
  const listedRows = async (): Promise<LatestSnapshotRow[]> => {
    const settled = await settledSnapshotTime(store());
    if (settled === null) return [];
    const ts = column(snapshotRecords, 'ts');
    const records = await store().query<{ token_id: string; ts: number; snapshot: string }>(
      sql`SELECT ${columns(snapshotRecords, ['token_id', 'ts', 'snapshot'])} FROM ${table(snapshotRecords)}
          WHERE ${ts} <= ${int64(settled)} AND ${ts} >= ${int64(settled - HORIZON_MS['1h'] - 5 * 60_000)}`,
    );
    const asOf = new Map<string, { ts: number; snapshot: string }>();
    for (const r of records) if ((asOf.get(r.token_id)?.ts ?? -Infinity) < r.ts) asOf.set(r.token_id, r);
    return [...asOf.values()].map((r) => latestSnapshotRow(JSON.parse(r.snapshot) as QuantSnapshot));
  };

  /** A token with a snapshot whose symbol no other token shares, with its snapshot. */
  async function uniqueToken(): Promise<{ token: TokenRow; snapshot: QuantSnapshot }> {
    const all = await tokenRows();
    const latest = new Map((await latestRows()).map((r) => [r.token_id, r]));
    const unique = (t: TokenRow, key: (o: TokenRow) => string) => all.filter((o) => key(o) === key(t)).length === 1;
    const token = all.find(
      (t) => latest.has(t.token_id) && t.chain !== 'solana' && unique(t, (o) => o.symbol.toUpperCase()) && unique(t, (o) => o.address.toLowerCase()),
    );
    if (!token) throw new Error('the world has no EVM token with a unique symbol and address, and a snapshot');
    return { token, snapshot: snapshotOf(latest.get(token.token_id)!) };
  }

  /** Every page of a token list query, following next_cursor. */
  async function followTokens(query: string, limit: number): Promise<any[]> {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const res = await world().request('GET', `/v1/quant/tokens?limit=${limit}&${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      expect(res.body.next_cursor === null).toBe(!res.body.has_more);
      seen.push(...res.body.data);
      cursor = res.body.next_cursor;
    } while (cursor !== null);
    return seen;
  }

  const scan = (body: unknown, key?: string) => world().request('POST', '/v1/quant/scan', { body, ...(key === undefined ? {} : { key }) });

  describe('GET /v1/quant/token/{token}', () => {
    it('resolves every reference form to the same token and returns its stored snapshot', async () => {
      const { token, snapshot } = await uniqueToken();
      const symbol = token.symbol;
      const forms = [
        token.token_id,
        `$${symbol}`,
        symbol,
        `$${symbol.toLowerCase()}`,
        symbol.toLowerCase(),
        `${token.chain}:${token.address}`,
        `${token.chain.toUpperCase()}:${token.address.toUpperCase().replace('0X', '0x')}`,
        token.address,
      ];
      for (const form of forms) {
        const res = await world().request('GET', `/v1/quant/token/${encodeURIComponent(form)}`);
        expect(res.status, `${form}: ${JSON.stringify(res.body)}`).toBe(200);
        expect(res.body.token.id, form).toBe(token.token_id);
        expect(res.body.id, form).toBe(snapshot.snapshotId);
      }
      const { body } = await world().request('GET', `/v1/quant/token/${token.token_id}`);
      expect(body).toMatchObject({ object: 'token_snapshot', dataset: 'live', livemode: true, ts: iso(snapshot.ts) });
      expect(body.token).toEqual({
        object: 'token',
        dataset: 'live',
        livemode: true,
        id: token.token_id,
        symbol: token.symbol,
        name: token.name,
        chain: token.chain,
        address: token.address,
        logo_url: token.logo_url,
        status: token.status,
        narrative: { slug: token.narrative },
        source_url: token.source_url,
      });
      // Values as the engine stored them, keys renamed.
      expect(body.scores).toEqual(snapshot.scores);
      expect(body.features).toEqual(snapshot.features);
      expect(body.model_versions).toEqual(snapshot.modelVersions);
      expect(body.divergence_state).toBe(snapshot.divergenceState);
      expect(body.market.price_usd).toBe(snapshot.market.priceUsd);
      expect(body.market.price_change_1h).toBe(snapshot.market.priceChange1h);
      expect(body.activity.mentions_24h).toBe(snapshot.activity.mentions24h);
      expect(body.score_details).toHaveLength(SCORE_NAMES.length);
      for (const detail of body.score_details) {
        const stored = snapshot.scoreDetails.find((d) => d.score === detail.score)!;
        expect(detail).toEqual({ score: stored.score, value: stored.value, drivers: stored.drivers, confidence: stored.confidence, reason: stored.reason, model_version: stored.modelVersion });
        if (detail.value !== null) expect(detail.drivers.reduce((s: number, d: { contribution: number }) => s + d.contribution, 0)).toBe(detail.value);
      }
      expect(body.active_signals.map((s: { id: string }) => s.id)).toEqual(snapshot.activeSignals.map((s) => s.signalId));
      expect(body.disclaimer).toEqual(expect.any(String));
    });

    it('gives freshness as stored, with the age at the time of the request', async () => {
      const { token, snapshot } = await uniqueToken();
      const before = world().endMs;
      const { body } = await world().request('GET', `/v1/quant/token/${token.token_id}`);
      const f = snapshot.freshness;
      expect(body.freshness).toMatchObject({
        updated_at: iso(f.updatedAt),
        source_last_event_at: f.sourceLastEventAt === null ? null : iso(f.sourceLastEventAt),
        market_last_at: f.marketLastAt === null ? null : iso(f.marketLastAt),
        source_lag_ms: f.sourceLagMs,
        market_lag_ms: f.marketLagMs,
      });
      // The clock starts at the end of the seeded history and runs on.
      expect(body.freshness.age_ms).toBeGreaterThanOrEqual(before - f.updatedAt);
      expect(body.freshness.stale_reasons.slice(0, f.staleReasons.length)).toEqual(f.staleReasons);
      expect(body.freshness.stale).toBe(body.freshness.stale_reasons.length > 0);
    });

    it('answers 304 to If-None-Match with its ETag, which names the snapshot and the as_of asked', async () => {
      const { token, snapshot } = await uniqueToken();
      const path = `/v1/quant/token/${token.token_id}`;
      const first = await world().request('GET', path);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^W\/"[\w-]+\.[0-9a-z]+"$/);

      const notModified = await world().request('GET', path, { headers: { 'If-None-Match': `"other", ${etag}` } });
      expect(notModified.status).toBe(304);
      expect(notModified.body).toBeUndefined();
      expect(notModified.headers.get('etag')).toBe(etag);
      expect((await world().request('GET', path, { headers: { 'If-None-Match': '*' } })).status).toBe(304);

      const other = await world().request('GET', path, { headers: { 'If-None-Match': 'W/"other"' } });
      expect(other.status).toBe(200);
      expect(other.headers.get('etag')).toBe(etag);
      // The same snapshot asked as of a later time is another answer (its as_of differs), so another tag.
      const asOf = await world().request('GET', `${path}?as_of=${Math.floor(snapshot.ts / 1000) + 1}`, { headers: { 'If-None-Match': etag } });
      expect(asOf.status).toBe(200);
      expect(asOf.headers.get('etag')).not.toBe(etag);
    });

    it('resolves a shared symbol to its most active token', async () => {
      const all = await tokenRows();
      const latest = new Map((await latestRows()).map((r) => [r.token_id, r.mentions_24h]));
      const bySymbol = new Map<string, TokenRow[]>();
      for (const t of all) bySymbol.set(t.symbol.toUpperCase(), [...(bySymbol.get(t.symbol.toUpperCase()) ?? []), t]);
      const shared = [...bySymbol.values()].filter((group) => group.length > 1);
      expect(shared.length).toBeGreaterThan(0);
      for (const group of shared) {
        const score = (t: TokenRow) => latest.get(t.token_id) ?? -1;
        const expected = group.reduce((best, t) => (score(t) > score(best) || (score(t) === score(best) && t.token_id < best.token_id) ? t : best));
        const res = await world().request('GET', `/v1/quant/token/$${group[0].symbol}`);
        if (!latest.has(expected.token_id)) {
          world().expectError(res, 404, 'NOT_FOUND');
          continue;
        }
        expect(res.status).toBe(200);
        expect(res.body.token.id, group[0].symbol).toBe(expected.token_id);
      }
    });

    it('answers 404 for unknown tokens and for a token without a snapshot yet, 400 for what is no reference', async () => {
      for (const ref of ['tk_doesNotExist', '$ZZZNOPE9', 'ZZZNOPE9', `base:0x${'0'.repeat(40)}`, `0x${'1'.repeat(40)}`, '1'.repeat(40)]) {
        const res = await world().request('GET', `/v1/quant/token/${encodeURIComponent(ref)}`);
        world().expectError(res, 404, 'NOT_FOUND');
      }
      const [template] = await tokenRows();
      await store().upsert('tokens', [{ ...template, token_id: 'tk_noSnapshotYet', symbol: 'NOSNAPYET', address: `0x${'2'.repeat(40)}`, chain: 'eth' }]);
      for (const ref of ['tk_noSnapshotYet', '$NOSNAPYET', `eth:0x${'2'.repeat(40)}`]) {
        const res = await world().request('GET', `/v1/quant/token/${encodeURIComponent(ref)}`);
        world().expectError(res, 404, 'NOT_FOUND');
        expect(res.body.error.message).toContain('no quant snapshot yet');
      }
      world().expectError(await world().request('GET', '/v1/quant/token/tk_noSnapshotYet/analogs'), 404, 'NOT_FOUND');
      for (const ref of ['$$$', `polygon:0x${'0'.repeat(40)}`, 'solana:0xabc', 'has space', 'x'.repeat(129)]) {
        const res = await world().request('GET', `/v1/quant/token/${encodeURIComponent(ref)}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues[0]).toMatchObject({ path: 'path.token', code: 'custom' });
      }
    });
  });

  describe('GET /v1/quant/token/{token}/analogs', () => {
    it('bounds k: 1 and 100 accepted, 40 by default; 0, 101 and non-integers refused', async () => {
      const { token } = await uniqueToken();
      const path = `/v1/quant/token/${token.token_id}/analogs`;
      const one = await world().request('GET', `${path}?k=1`);
      expect(one.status).toBe(200);
      expect(one.body.k).toBe(1);
      expect(one.body.data).toHaveLength(1);
      const hundred = await world().request('GET', `${path}?k=100`);
      expect(hundred.body.k).toBe(100);
      expect(hundred.body.data).toHaveLength(100);
      expect(hundred.body.data[0]).toEqual(one.body.data[0]);
      const dflt = await world().request('GET', path);
      expect(dflt.body.k).toBe(40);
      expect(dflt.body.data).toEqual(hundred.body.data.slice(0, 40));
      for (const [k, code] of [
        ['0', 'too_small'],
        ['101', 'too_big'],
        ['abc', 'invalid_type'],
        ['1.5', 'invalid_type'],
      ]) {
        const res = await world().request('GET', `${path}?k=${k}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues[0]).toMatchObject({ path: 'query.k', code });
      }
    });

    it('returns the nearest analogs first, each resolved before the snapshot and none of the same token within 24 h', async () => {
      // Tokens of the simulated history (other cases may add rows of their own to latest_snapshots).
      const seeded = await latestRows(sql`${column(latestSnapshots, 'token_id')} IN (SELECT ${column(snapshotHistory, 'token_id')} FROM ${table(snapshotHistory)})`);
      for (const row of seeded.slice(0, 6)) {
        const snapshot = snapshotOf(row);
        const res = await world().request('GET', `/v1/quant/token/${row.token_id}/analogs?k=100`);
        expect(res.status).toBe(200);
        const { body } = res;
        expect(body).toMatchObject({ object: 'analogs', model_version: 'analog-v1.0', snapshot_id: snapshot.snapshotId, snapshot_ts: iso(snapshot.ts), k: 100 });
        const data = body.data as any[];
        expect(data.length).toBeGreaterThan(0);
        for (let i = 1; i < data.length; i++) expect(data[i].distance).toBeGreaterThanOrEqual(data[i - 1].distance);
        const ids = data.map((a) => a.snapshot_id);
        const resolved = new Map(
          (
            await store().query<OutcomeRow>(
              sql`SELECT ${columns(outcomes)} FROM ${table(outcomes)} WHERE ${column(outcomes, 'subject_id')} IN ${list(ids)} AND ${column(outcomes, 'horizon')} = ${'24h'}`,
            )
          ).map((o) => [o.subject_id, o]),
        );
        const history = new Map(
          (
            await store().query<SnapshotHistoryRow>(
              sql`SELECT ${columns(snapshotHistory)} FROM ${table(snapshotHistory)} WHERE ${column(snapshotHistory, 'snapshot_id')} IN ${list(ids)}`,
            )
          ).map((h) => [h.snapshot_id, h]),
        );
        for (const a of data) {
          const outcome = resolved.get(a.snapshot_id)!;
          const h = history.get(a.snapshot_id)!;
          expect(outcome, a.snapshot_id).toBeDefined();
          expect(outcome.resolved_at).toBeLessThanOrEqual(snapshot.ts);
          expect(a.return_24h).toBe(outcome.forward_return);
          expect(a.max_drawdown_24h).toBe(outcome.max_drawdown);
          expect([a.token_id, a.ts]).toEqual([h.token_id, iso(h.ts)]);
          expect(a.token?.id ?? a.token_id).toBe(h.token_id);
          if (a.token_id === row.token_id) expect(Math.abs(h.ts - snapshot.ts)).toBeGreaterThan(DAY);
        }
        // The summary is over exactly these analogs.
        const returns = data.map((a) => a.return_24h).filter((r): r is number => r !== null).sort((x, y) => x - y);
        const mid = returns.length >> 1;
        expect(body.summary.n).toBe(data.length);
        expect(body.summary.median_24h).toBe(returns.length % 2 ? returns[mid] : (returns[mid - 1] + returns[mid]) / 2);
        expect(body.summary.positive_share).toBe(returns.filter((r) => r > 0).length / returns.length);
        const drawdowns = data.map((a) => a.max_drawdown_24h).filter((d): d is number => d !== null);
        expect(body.summary.worst_drawdown_24h).toBe(Math.min(...drawdowns));
      }
    });

    it("gives the snapshot endpoint the summary of the 40 nearest analogs", async () => {
      const { token } = await uniqueToken();
      const snapshot = await world().request('GET', `/v1/quant/token/${token.token_id}`);
      const analogs = await world().request('GET', `/v1/quant/token/${token.token_id}/analogs`);
      expect(snapshot.body.analogs).toEqual(analogs.body.summary);
      expect(snapshot.body.analogs.n).toBe(40);
    });
  });

  describe('GET /v1/quant/tokens', () => {
    it('bounds each parameter, and names each refused one', async () => {
      const ok = async (query: string) => {
        const res = await world().request('GET', `/v1/quant/tokens?${query}`);
        expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
        return res.body;
      };
      expect((await ok('limit=1')).data).toHaveLength(1);
      const count = (await listedRows()).length;
      expect((await ok('limit=100')).data).toHaveLength(Math.min(100, count));
      expect((await ok('')).data).toHaveLength(Math.min(25, count));
      await ok(`q=${'x'.repeat(64)}`);
      const refused: [string, string, string][] = [
        ['limit=0', 'query.limit', 'too_small'],
        ['limit=101', 'query.limit', 'too_big'],
        ['limit=ten', 'query.limit', 'invalid_type'],
        ['dir=up', 'query.dir', 'invalid_value'],
        ['sort=symbol', 'query.sort', 'invalid_value'],
        ['sort=MOMENTUM', 'query.sort', 'invalid_value'],
        ['chain=polygon', 'query.chain', 'invalid_value'],
        ['narrative=Not%20A%20Slug', 'query.narrative', 'invalid_format'],
        [`q=${'x'.repeat(65)}`, 'query.q', 'too_big'],
        ['cursor=', 'query.cursor', 'too_small'],
        ['colour=red', 'query.colour', 'unrecognized_key'],
      ];
      for (const [query, path, code] of refused) {
        const res = await world().request('GET', `/v1/quant/tokens?${query}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues, query).toContainEqual(expect.objectContaining({ path, code }));
      }
    });

    it('sorts by rule fields in both directions, nulls last, with values as stored', async () => {
      const latest = new Map((await listedRows()).map((r) => [r.token_id, snapshotOf(r)]));
      for (const sort of ['momentum', 'crowding', 'early_quality', 'unique_authors_1h', 'price_change_1h', 'mention_velocity_1h']) {
        for (const dir of ['desc', 'asc'] as const) {
          const rows = await followTokens(`sort=${sort}&dir=${dir}`, 100);
          expect(rows).toHaveLength(latest.size);
          expectOrdered(rows, sort, dir);
          for (const row of rows) {
            const s = latest.get(row.token_id)!;
            expect(row).toMatchObject({ object: 'token_score', ts: iso(s.ts), scores: s.scores, divergence_state: s.divergenceState });
            for (const f of FEATURE_NAMES) expect(row.features[f], `${row.token_id} ${f}`).toBe(s.features[f] ?? null);
          }
        }
      }
      // early_quality has nulls in this world, so "nulls last" was exercised.
      expect([...latest.values()].some((s) => s.scores.early_quality === null)).toBe(true);
    });

    it('follows next_cursor to the end visiting every token once, with filters', async () => {
      const all = await listedRows();
      const rows = await followTokens('sort=conviction&dir=desc', 7);
      expect(rows.map((r) => r.token_id).sort()).toEqual(all.map((r) => r.token_id).sort());
      const chain = 'solana';
      const onChain = await followTokens(`sort=momentum&chain=${chain}`, 3);
      expect(onChain.map((r) => r.token_id).sort()).toEqual(all.filter((r) => r.chain === chain).map((r) => r.token_id).sort());
      const narrative = all[0].narrative;
      const inNarrative = await followTokens(`narrative=${narrative}`, 5);
      expect(inNarrative.map((r) => r.token_id).sort()).toEqual(all.filter((r) => r.narrative === narrative).map((r) => r.token_id).sort());
      // q matches the symbol or the metadata name, ignoring case.
      const { token } = await uniqueToken();
      const q = token.name.slice(1, 5).toLowerCase();
      const named = await followTokens(`q=${encodeURIComponent(q)}`, 100);
      const metadata = new Map((await tokenRows()).map((t) => [t.token_id, t]));
      const matching = all.filter((r) => r.symbol.toLowerCase().includes(q) || (metadata.get(r.token_id)?.name.toLowerCase().includes(q) ?? false));
      expect(named.map((r) => r.token_id).sort()).toEqual(matching.map((r) => r.token_id).sort());
      expect(named.map((r) => r.token_id)).toContain(token.token_id);
    });

    it('refuses a cursor of another sort or filter on query.cursor', async () => {
      const first = await world().request('GET', '/v1/quant/tokens?sort=crowding&dir=asc&limit=2');
      const cursor = encodeURIComponent(first.body.next_cursor);
      for (const other of [`sort=crowding&dir=desc&cursor=${cursor}`, `sort=momentum&dir=asc&cursor=${cursor}`, `sort=crowding&dir=asc&chain=base&cursor=${cursor}`]) {
        const res = await world().request('GET', `/v1/quant/tokens?limit=2&${other}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues[0]).toMatchObject({ path: 'query.cursor', code: 'invalid_cursor' });
      }
    });
  });

  describe('POST /v1/quant/scan', () => {
    /** The rows a scan of `rules` over the latest snapshots must return, by sort then token id. */
    async function expectedScan(rules: readonly Rule[], sort: RuleField, dir: 'asc' | 'desc'): Promise<string[]> {
      const rows = (await listedRows()).filter((r) => rules.every((rule) => passes(r[rule.field], rule)));
      return rows
        .sort((a, b) => {
          const [x, y] = [a[sort], b[sort]];
          if (x === null || y === null) return x === y ? (a.token_id < b.token_id ? -1 : 1) : x === null ? 1 : -1;
          return x === y ? (a.token_id < b.token_id ? -1 : 1) : dir === 'desc' ? y - x : x - y;
        })
        .map((r) => r.token_id);
    }

    it('runs each preset: its rules, its sort, exactly the passing tokens', async () => {
      let nonEmpty = 0;
      for (const name of SCAN_PRESET_NAMES) {
        const preset = SCAN_PRESETS[name];
        const res = await scan({ preset: name, limit: 200 });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        const { body } = res;
        expect(body).toMatchObject({ object: 'scan', preset: name, sort: preset.sort, sort_dir: preset.sortDir, limit: 200, delayed_minutes: 0, chains: null, narrative: null });
        expect(body.rules).toEqual(preset.rules);
        expect(body.count).toBe(body.data.length);
        for (const row of body.data) for (const rule of preset.rules) expect(passes(valueOf(row, rule.field), rule), `${name} ${row.token_id} ${rule.field}`).toBe(true);
        expect(body.data.map((r: { token_id: string }) => r.token_id)).toEqual(await expectedScan(preset.rules, preset.sort, preset.sortDir));
        if (body.count > 0) nonEmpty++;
      }
      expect(nonEmpty).toBeGreaterThanOrEqual(4);
    });

    it("ANDs a preset's rules with the body's, and applies sort, limit, chains and narrative", async () => {
      const extra: Rule = { field: 'unique_authors_24h', op: '>=', value: 10 };
      const preset = SCAN_PRESETS['high-conviction'];
      const res = await scan({ preset: 'high-conviction', rules: [extra], sort: 'unique_authors_24h', sort_dir: 'asc', limit: 3 });
      expect(res.body.rules).toEqual([...preset.rules, extra]);
      expect(res.body.data.map((r: { token_id: string }) => r.token_id)).toEqual((await expectedScan([...preset.rules, extra], 'unique_authors_24h', 'asc')).slice(0, 3));
      const latest = await listedRows();
      const anyCrowding: Rule = { field: 'crowding', op: '>=', value: 0 };
      const chains = await scan({ rules: [anyCrowding], chains: ['base', 'eth'], limit: 200 });
      expect(chains.body.data.map((r: { token_id: string }) => r.token_id).sort()).toEqual(
        latest.filter((r) => ['base', 'eth'].includes(r.chain) && r.crowding !== null).map((r) => r.token_id).sort(),
      );
      expect(chains.body).toMatchObject({ sort: 'momentum', sort_dir: 'desc', chains: ['base', 'eth'] });
      const narrative = latest[0].narrative;
      const inNarrative = await scan({ rules: [anyCrowding], narrative, limit: 200 });
      expect(inNarrative.body.data.every((r: any) => r.token?.narrative.slug === narrative)).toBe(true);
      expect(inNarrative.body.count).toBe(latest.filter((r) => r.narrative === narrative && r.crowding !== null).length);
    });

    it('never passes a null, whatever the operator', async () => {
      const latest = await listedRows();
      const known = latest.filter((r) => r.early_quality !== null).length;
      expect(known).toBeLessThan(latest.length);
      for (const rule of [
        { field: 'early_quality', op: '>=', value: -1e9 },
        { field: 'early_quality', op: '<', value: 1e9 },
      ]) {
        const res = await scan({ rules: [rule], limit: 200 });
        expect(res.body.count).toBe(known);
        expect(res.body.data.every((r: any) => r.scores.early_quality !== null)).toBe(true);
      }
    });

    it('bounds rules and limit, and refuses unknown fields, wrong types and an empty request', async () => {
      const rule = { field: 'momentum', op: '>=', value: 0 };
      expect((await scan({ rules: Array(12).fill(rule) })).status).toBe(200);
      expect((await scan({ rules: [rule], limit: 1 })).body.data).toHaveLength(1);
      expect((await scan({ rules: [rule], limit: 200 })).status).toBe(200);
      const refused: [unknown, string, string][] = [
        [{ rules: Array(13).fill(rule) }, 'body.rules', 'too_big'],
        [{ rules: [rule], limit: 0 }, 'body.limit', 'too_small'],
        [{ rules: [rule], limit: 201 }, 'body.limit', 'too_big'],
        [{ rules: [rule], limit: '10' }, 'body.limit', 'invalid_type'],
        [{ rules: [rule], limit: 2.5 }, 'body.limit', 'invalid_type'],
        [{ rules: [{ ...rule, field: 'symbol' }] }, 'body.rules[0].field', 'invalid_value'],
        [{ rules: [{ ...rule, op: '=' }] }, 'body.rules[0].op', 'invalid_value'],
        [{ rules: [{ ...rule, value: '5' }] }, 'body.rules[0].value', 'invalid_type'],
        [{ rules: [{ ...rule, colour: 'red' }] }, 'body.rules[0].colour', 'unrecognized_key'],
        [{ rules: [{ field: 'momentum', op: '>' }] }, 'body.rules[0].value', 'invalid_type'],
        [{ rules: rule }, 'body.rules', 'invalid_type'],
        [{ preset: 'moonshots' }, 'body.preset', 'invalid_value'],
        [{ rules: [rule], sort: 'price' }, 'body.sort', 'invalid_value'],
        [{ rules: [rule], sort_dir: 'up' }, 'body.sort_dir', 'invalid_value'],
        [{ rules: [rule], chains: 'solana' }, 'body.chains', 'invalid_type'],
        [{ rules: [rule], chains: ['polygon'] }, 'body.chains[0]', 'invalid_value'],
        [{ rules: [rule], chains: [] }, 'body.chains', 'too_small'],
        [{ rules: [rule], narrative: 'AI Agents' }, 'body.narrative', 'invalid_format'],
        [{}, 'body', 'custom'],
        [{ rules: [] }, 'body', 'custom'],
        [[rule], 'body', 'invalid_type'],
      ];
      for (const [body, path, code] of refused) {
        const res = await scan(body);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues, JSON.stringify(body)).toContainEqual(expect.objectContaining({ path, code }));
      }
      world().expectError(await world().request('POST', '/v1/quant/scan'), 400, 'VALIDATION');
    });

    it('gives Free keys the snapshots of 15 minutes ago, and paid keys those of the settled time of the history', async () => {
      const rules: Rule[] = [{ field: 'crowding', op: '>=', value: 0 }];
      /** The scan's rows are each token's latest history row at or before its as_of, passing the rule, in order. */
      const expectAsOf = async (body: any) => {
        const asOf = Date.parse(body.as_of);
        const history = await store().query<SnapshotHistoryRow>(
          sql`SELECT ${columns(snapshotHistory)} FROM ${table(snapshotHistory)} WHERE ${column(snapshotHistory, 'ts')} <= ${int64(asOf)}`,
        );
        const asOfRows = new Map<string, SnapshotHistoryRow>();
        for (const h of history) if ((asOfRows.get(h.token_id)?.ts ?? -Infinity) < h.ts) asOfRows.set(h.token_id, h);
        const passing = [...asOfRows.values()].filter((h) => h.crowding !== null);
        expect(body.data.map((r: any) => r.token_id).sort()).toEqual(passing.map((h) => h.token_id).sort());
        expectOrdered(body.data, 'momentum', 'desc');
        for (const row of body.data) {
          const h = asOfRows.get(row.token_id)!;
          expect(row.ts).toBe(iso(h.ts));
          for (const s of SCORE_NAMES) expect(row.scores[s]).toBe(h[s]);
          for (const f of FEATURE_NAMES) expect(row.features[f]).toBe(h[f]);
        }
      };
      const team = await scan({ rules, limit: 200 });
      const pro = await scan({ rules, limit: 200 }, world().keys.pro);
      expect(team.body.delayed_minutes).toBe(0);
      expect(pro.body.delayed_minutes).toBe(0);
      expect(pro.body.data).toEqual(team.body.data);
      // The history is complete in this world: paid keys scan at most one grid step behind its newest snapshot.
      const latest = new Map((await latestRows()).map((r) => [r.token_id, r]));
      const newest = Math.max(...[...latest.values()].map((r) => r.ts));
      expect(Date.parse(team.body.as_of)).toBe(newest - 5 * 60_000);
      await expectAsOf(team.body);

      const free = await scan({ rules, limit: 200 }, world().keys.free);
      expect(free.status).toBe(200);
      expect(free.body.delayed_minutes).toBe(15);
      const asOf = Date.parse(free.body.as_of);
      // The service clock starts at the end of the history and runs in real time.
      expect(asOf).toBeGreaterThanOrEqual(world().endMs - 15 * 60_000);
      expect(asOf).toBeLessThan(Date.parse(team.body.as_of));
      await expectAsOf(free.body);
      // Delayed, not live: some token has a newer snapshot than the Free key saw.
      expect(free.body.data.some((r: any) => Date.parse(r.ts) < latest.get(r.token_id)!.ts)).toBe(true);
    });
  });
}
