import { describe, expect, it } from 'vitest';
import { column, columns, int64, list, sql, table, type Sql } from '../../../infra/store/sql-literal.ts';
import { signalRuleDocs } from '../../../processors/quant-engine/signals/rules.ts';
import { tokens, type TokenRow } from '../../../presenters/tokens-table.ts';
import { signals, type SignalRow } from '../../../projections/tables/quant.ts';
import type { Signal } from '../../../schemas/records/quant-signals.ts';
import type { ApiWorld } from '../../helpers/api-world.ts';

/** GET /v1/quant/signals and /v1/quant/signals/{id}, checked against the store. */
export function signalCases(world: () => ApiWorld): void {
  const allSignals = async (where: Sql = sql`${true}`): Promise<SignalRow[]> =>
    world().store.query<SignalRow>(sql`SELECT ${columns(signals)} FROM ${table(signals)} WHERE ${where}`);
  const ids = (rows: { signal_id: string }[]) => rows.map((r) => r.signal_id).sort();

  /** Every signal of a feed query, following next_cursor; checks each page's envelope and that no signal repeats. */
  async function follow(query: string, limit = 100): Promise<any[]> {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const page = await world().request('GET', `/v1/quant/signals?limit=${limit}${query ? `&${query}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      expect(page.body).toMatchObject({ object: 'list', dataset: 'live', livemode: true });
      expect(page.body.data.length).toBeLessThanOrEqual(limit);
      expect(page.body.next_cursor === null).toBe(!page.body.has_more);
      seen.push(...page.body.data);
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(new Set(seen.map((s) => s.id)).size).toBe(seen.length);
    return seen;
  }
  const sortedIds = (data: { id: string }[]) => data.map((s) => s.id).sort();

  describe('signals', () => {
    it('lists signals newest first, each as the engine recorded it with its token', async () => {
      const res = await world().request('GET', '/v1/quant/signals');
      expect(res.status).toBe(200);
      const data = res.body.data as any[];
      expect(data).toHaveLength(25);
      for (let i = 1; i < data.length; i++) {
        const [a, b] = [data[i - 1], data[i]];
        expect(a.fired_at > b.fired_at || (a.fired_at === b.fired_at && a.id > b.id)).toBe(true);
      }
      const stored = new Map((await allSignals(sql`${column(signals, 'signal_id')} IN ${list(data.map((s) => s.id))}`)).map((r) => [r.signal_id, JSON.parse(r.record) as Signal]));
      const tokenRows = new Map(
        (await world().store.query<TokenRow>(sql`SELECT ${columns(tokens)} FROM ${table(tokens)} WHERE ${column(tokens, 'token_id')} IN ${list(data.map((s) => s.token.id))}`)).map((t) => [t.token_id, t]),
      );
      for (const s of data) {
        const r = stored.get(s.id)!;
        expect(s).toMatchObject({
          object: 'signal',
          type: r.type,
          label: r.label,
          rule_version: r.ruleVersion,
          status: r.status,
          fired_at: new Date(r.firedAt).toISOString(),
          ended_at: r.endedAt === null ? null : new Date(r.endedAt).toISOString(),
          end_reason: r.endReason,
          strength: r.strength,
          scores: r.scores,
          why: r.why,
          disclaimer: expect.stringContaining('not financial advice'),
        });
        expect(s.analogs).toEqual(
          r.analogs === null
            ? null
            : { n: r.analogs.n, median_24h: r.analogs.median24h, worst_drawdown_24h: r.analogs.worstDrawdown24h, positive_share: r.analogs.positiveShare, confidence: r.analogs.confidence },
        );
        const t = tokenRows.get(r.tokenId)!;
        expect(s.token).toEqual({
          object: 'token',
          id: t.token_id,
          dataset: 'live',
          livemode: true,
          symbol: t.symbol,
          name: t.name,
          chain: t.chain,
          address: t.address,
          logo_url: t.logo_url,
          status: t.status,
          narrative: { slug: t.narrative },
          source_url: t.source_url,
        });
      }
    });

    it('pages through the whole feed visiting every signal once', async () => {
      const seen = await follow('', 7);
      expect(sortedIds(seen)).toEqual(ids(await allSignals()));
    });

    it('filters by status, type and chain, matching the store', async () => {
      const all = await allSignals();
      expect(new Set(all.map((s) => s.status))).toEqual(new Set(['active', 'ended']));
      for (const status of ['active', 'ended'] as const) {
        const got = await follow(`status=${status}`);
        expect(got.every((s) => s.status === status)).toBe(true);
        expect(sortedIds(got)).toEqual(ids(all.filter((s) => s.status === status)));
      }

      const types = [...new Set(all.map((s) => s.type))].sort().slice(0, 2);
      const byType = await follow(`signal_type=${types.join(',')}`);
      expect(new Set(byType.map((s) => s.type))).toEqual(new Set(types));
      expect(sortedIds(byType)).toEqual(ids(all.filter((s) => types.includes(s.type))));

      const tokenRows = await world().store.query<TokenRow>(sql`SELECT ${columns(tokens)} FROM ${table(tokens)}`);
      const chainOf = new Map(tokenRows.map((t) => [t.token_id, t.chain]));
      const chain = chainOf.get(all[0].token_id)!;
      const byChain = await follow(`chain=${chain}`);
      expect(byChain.every((s) => s.token.chain === chain)).toBe(true);
      expect(sortedIds(byChain)).toEqual(ids(all.filter((s) => chainOf.get(s.token_id) === chain)));
    });

    it('filters by minimum score, market cap and liquidity at fire time; unknown values never pass', async () => {
      const all = await allSignals();
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
      const momentum = median(all.flatMap((s) => (s.momentum === null ? [] : [s.momentum])));
      const byScore = await follow(`min_score=momentum:${momentum}`);
      expect(byScore.length).toBeGreaterThan(0);
      expect(byScore.every((s) => s.scores.momentum !== null && s.scores.momentum >= momentum)).toBe(true);
      expect(sortedIds(byScore)).toEqual(ids(all.filter((s) => s.momentum !== null && s.momentum >= momentum)));

      for (const [param, field] of [
        ['market_cap', 'market_cap_usd'],
        ['liquidity', 'liquidity_usd'],
      ] as const) {
        const threshold = median(all.flatMap((s) => (s[field] === null ? [] : [s[field]])));
        const got = await follow(`${param}=${encodeURIComponent(String(threshold))}`);
        const expected = all.filter((s) => s[field] !== null && s[field] >= threshold);
        expect(expected.length).toBeGreaterThan(0);
        expect(expected.length).toBeLessThan(all.length);
        expect(sortedIds(got)).toEqual(ids(expected));
      }
      const both = await follow(`min_score=momentum:${momentum}&status=active`);
      expect(sortedIds(both)).toEqual(ids(all.filter((s) => s.status === 'active' && s.momentum !== null && s.momentum >= momentum)));
    });

    it('filters by created_after given as ISO-8601 or unix seconds, strictly after', async () => {
      const all = await allSignals();
      const firedTimes = [...new Set(all.map((s) => s.fired_at))].sort((a, b) => a - b);
      // A time that is a firing time, on a whole second, so both forms name it exactly.
      const at = firedTimes.find((t, i) => i > firedTimes.length / 2 && t % 1000 === 0)!;
      expect(at).toBeDefined();
      const expected = ids(all.filter((s) => s.fired_at > at));
      const iso = await follow(`created_after=${encodeURIComponent(new Date(at).toISOString())}`);
      expect(sortedIds(iso)).toEqual(expected);
      expect(iso.every((s) => Date.parse(s.fired_at) > at)).toBe(true);
      const unix = await follow(`created_after=${at / 1000}`);
      expect(sortedIds(unix)).toEqual(expected);
      const offset = await follow(`created_after=${encodeURIComponent(new Date(at).toISOString().replace('Z', '+00:00'))}`);
      expect(sortedIds(offset)).toEqual(expected);
    });

    it('filters by token in any reference form; an unknown token is 404', async () => {
      const all = await allSignals();
      const tokenId = all[0].token_id;
      const [t] = await world().store.query<TokenRow>(sql`SELECT ${columns(tokens)} FROM ${table(tokens)} WHERE ${column(tokens, 'token_id')} = ${tokenId}`);
      const expected = ids(all.filter((s) => s.token_id === tokenId));
      for (const ref of [tokenId, `${t.chain}:${t.address}`]) {
        const got = await follow(`token=${encodeURIComponent(ref)}`);
        expect(got.every((s) => s.token.id === tokenId)).toBe(true);
        expect(sortedIds(got)).toEqual(expected);
      }
      world().expectError(await world().request('GET', '/v1/quant/signals?token=tk_doesnotexist'), 404, 'NOT_FOUND');
      const bad = await world().request('GET', '/v1/quant/signals?token=' + encodeURIComponent('$not a symbol'));
      world().expectError(bad, 400, 'VALIDATION');
      expect(bad.body.error.details.issues[0].path).toBe('query.token');
    });

    it('refuses a cursor from another filter or that is no cursor, on query.cursor', async () => {
      const first = await world().request('GET', '/v1/quant/signals?limit=2&status=all');
      const cursor = encodeURIComponent(first.body.next_cursor);
      for (const query of [`status=active&limit=2&cursor=${cursor}`, `signal_type=COOLING&limit=2&cursor=${cursor}`, 'cursor=not-a-cursor']) {
        const res = await world().request('GET', `/v1/quant/signals?${query}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues[0].path).toBe('query.cursor');
      }
      // The same filters with another page size continue where the first page stopped.
      const next = await world().request('GET', `/v1/quant/signals?limit=3&cursor=${cursor}`);
      const five = await world().request('GET', '/v1/quant/signals?limit=5');
      expect(next.body.data.map((s: { id: string }) => s.id)).toEqual(five.body.data.slice(2).map((s: { id: string }) => s.id));
    });

    it('takes limit from 1 to 100 and refuses every malformed filter with its path', async () => {
      expect((await world().request('GET', '/v1/quant/signals?limit=1')).body.data).toHaveLength(1);
      const hundred = await world().request('GET', '/v1/quant/signals?limit=100');
      expect(hundred.body.data.length).toBe(Math.min(100, (await allSignals()).length));
      const cases: [string, string, string][] = [
        ['limit=0', 'query.limit', 'too_small'],
        ['limit=101', 'query.limit', 'too_big'],
        ['limit=2.5', 'query.limit', 'invalid_type'],
        ['limit=many', 'query.limit', 'invalid_type'],
        ['min_score=momentum', 'query.min_score', 'custom'],
        ['min_score=hype:10', 'query.min_score', 'custom'],
        ['min_score=momentum:', 'query.min_score', 'custom'],
        ['min_score=momentum:high', 'query.min_score', 'custom'],
        ['signal_type=COOLING,NOPE', 'query.signal_type[1]', 'invalid_value'],
        ['signal_type=', 'query.signal_type[0]', 'invalid_value'],
        ['chain=tron', 'query.chain[0]', 'invalid_value'],
        ['market_cap=-1', 'query.market_cap', 'too_small'],
        ['liquidity=lots', 'query.liquidity', 'invalid_type'],
        ['created_after=yesterday', 'query.created_after', 'custom'],
        ['created_after=2026-01-01T00:00:00', 'query.created_after', 'custom'],
        ['created_after=100000000000000000000', 'query.created_after', 'custom'],
        ['status=open', 'query.status', 'invalid_value'],
        ['colour=red', 'query.colour', 'unrecognized_key'],
      ];
      for (const [query, path, code] of cases) {
        const res = await world().request('GET', `/v1/quant/signals?${query}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues, query).toContainEqual(expect.objectContaining({ path, code }));
      }
      expect((await world().request('GET', '/v1/quant/signals?market_cap=0&liquidity=0')).status).toBe(200);
    });

    it('gives one signal with its conditions, feature snapshot, prior firings and rule', async () => {
      const [row] = await allSignals(sql`${column(signals, 'record')} LIKE '%"priorFirings":1%' OR ${column(signals, 'record')} LIKE '%"priorFirings":2%'`);
      expect(row, 'a signal that fired before on its token').toBeDefined();
      const record = JSON.parse(row.record) as Signal;
      const res = await world().request('GET', `/v1/quant/signals/${record.signalId}`);
      expect(res.status).toBe(200);
      const s = res.body;
      expect(s).toMatchObject({ object: 'signal', id: record.signalId, type: record.type, strength: record.strength, scores: record.scores, why: record.why });
      expect(s.token.id).toBe(record.tokenId);
      expect(s.conditions).toEqual(record.conditions);
      expect(s.features).toEqual(record.features);
      expect(s.disclaimer).toEqual(expect.any(String));
      expect(s.rule).toEqual(
        expect.objectContaining({ rule_version: record.ruleVersion, type: record.type, cooldown_minutes: signalRuleDocs().find((d) => d.ruleVersion === record.ruleVersion)!.cooldownMinutes }),
      );
      const earlier = await allSignals(
        sql`${column(signals, 'rule_version')} = ${record.ruleVersion} AND ${column(signals, 'token_id')} = ${record.tokenId} AND ${column(signals, 'fired_at')} < ${int64(record.firedAt)}`,
      );
      expect(s.prior_firings.count).toBe(record.priorFirings);
      expect(s.prior_firings.data.map((p: { id: string }) => p.id)).toEqual(
        earlier.sort((a, b) => b.fired_at - a.fired_at).map((r) => r.signal_id).slice(0, 20),
      );
      expect(s.prior_firings.data.length).toBe(Math.min(record.priorFirings, 20));
      for (const p of s.prior_firings.data) expect(Object.keys(p)).not.toContain('scores');
    });

    it('answers an unknown signal 404 and a malformed id 400 on path.id', async () => {
      world().expectError(await world().request('GET', '/v1/quant/signals/sig_0123456789abcdef'), 404, 'NOT_FOUND');
      for (const id of ['abc', 'sig_XYZ', 'sig_']) {
        const res = await world().request('GET', `/v1/quant/signals/${id}`);
        world().expectError(res, 400, 'VALIDATION');
        expect(res.body.error.details.issues[0].path).toBe('path.id');
      }
    });

    it('compares minimums with the values at fire time as stored', async () => {
      // A threshold just above a stored market cap excludes exactly the signals at or below it.
      const [top] = await world().store.query<{ v: number }>(sql`SELECT max(${column(signals, 'market_cap_usd')}) AS v FROM ${table(signals)}`);
      const atTop = await follow(`market_cap=${encodeURIComponent(String(top.v))}`);
      expect(atTop.length).toBeGreaterThan(0);
      expect(await follow(`market_cap=${encodeURIComponent(String(top.v * 1.0001))}`)).toEqual([]);
    });
  });
}
