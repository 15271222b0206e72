import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { researchRole } from '../../cli/roles/research.ts';
import type { RunningRole } from '../../cli/roles/role.ts';
import { EVENT_STUDIES } from '../../research/event-studies/studies.ts';
import { startApiWorld, type ApiResponse, type ApiWorld } from '../helpers/api-world.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * Backtests and event studies end to end: the real API over a real socket, the live
 * projections and the research role as `tqa start` runs it, over a simulated world. The
 * role starts only after the first requests, so runs are seen queued, canceled while queued
 * and counted against the plan's limit before any of them runs.
 */

let world: ApiWorld;
let research: RunningRole | null = null;

const RULES = [{ field: 'momentum', op: '>=', value: 50 }];
const BODY = { rules: RULES, horizon: '24h', name: 'momentum 50+' };

beforeAll(async () => {
  world = await startApiWorld();
}, 600_000);

afterAll(async () => {
  await research?.stop();
  await world?.stop();
});

function startResearch(): Promise<RunningRole> {
  const { config, log, codec, store } = world;
  return researchRole.start({
    config,
    logger: silentLogger,
    services: { log, codec, registry: undefined as never, close: async () => undefined },
    store: async () => store,
    stdout: sink().stream,
  });
}

async function poll(path: string, key?: string): Promise<ApiResponse> {
  return waitFor(async () => {
    const res = await world.request('GET', path, { key });
    expect(res.status).toBe(200);
    return ['done', 'failed', 'canceled'].includes(res.body.status) && res;
  }, `${path} to end`, 120_000);
}

describe('backtests before the runner starts', () => {
  let canceled: string;

  it('queues a run: 202, a Location to poll, status queued', async () => {
    const res = await world.request('POST', '/v1/quant/backtests', { body: BODY });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/quant/backtests/${res.body.id}`);
    expect(res.body).toMatchObject({
      object: 'backtest_run',
      status: 'queued',
      name: 'momentum 50+',
      progress: null,
      spec: { horizon: '24h', cooldown: '24h', dead_token_policy: 'last_price', from: null, to: null, universe: { chains: null, min_liquidity_usd: null } },
    });
    expect(res.body.id).toMatch(/^btr_[0-9a-f]{24}$/);
    const again = await world.request('GET', res.headers.get('location')!);
    expect(again.body).toMatchObject({ id: res.body.id, status: 'queued' });
  });

  it('refuses a run beyond the plan limit with 409 LIMIT_REACHED (Pro: 2 queued or running)', async () => {
    const first = await world.request('POST', '/v1/quant/backtests', { key: world.keys.pro, body: BODY });
    const second = await world.request('POST', '/v1/quant/backtests', { key: world.keys.pro, body: { ...BODY, horizon: '1h' } });
    expect([first.status, second.status]).toEqual([202, 202]);
    world.expectError(await world.request('POST', '/v1/quant/backtests', { key: world.keys.pro, body: BODY }), 409, 'LIMIT_REACHED');
    canceled = second.body.id;
  });

  it('cancels a queued run, which frees a place under the limit once the runner records it', async () => {
    const res = await world.request('POST', `/v1/quant/backtests/${canceled}/cancel`, { key: world.keys.pro });
    expect(res.status).toBe(200);
    expect(res.body.cancel_requested_at).toEqual(expect.any(String));
    research = await startResearch();
    const ended = await poll(`/v1/quant/backtests/${canceled}`, world.keys.pro);
    expect(ended.body).toMatchObject({ status: 'canceled', reason: 'canceled by its owner', result: null });
    world.expectError(await world.request('POST', `/v1/quant/backtests/${canceled}/cancel`, { key: world.keys.pro }), 409, 'CONFLICT');
  });
});

describe('backtests with the runner', () => {
  it('runs a queued backtest to done, with progress and the result', async () => {
    const posted = await world.request('POST', '/v1/quant/backtests', { body: { ...BODY, name: 'to done' } });
    const done = await poll(posted.headers.get('location')!);
    expect(done.body.status).toBe('done');
    expect(done.body.progress.scanned).toBe(done.body.progress.total);
    expect(done.body.progress.total).toBeGreaterThan(0);
    expect(done.body.attempt).toBe(1);
    expect(done.body.as_of).toEqual(expect.any(String));
    const result = done.body.result;
    expect(result.n).toBe(result.events.length);
    expect(result.n).toBeGreaterThan(0);
    expect(result.horizon).toBe('24h');
    expect(result.leakage_checks.length).toBeGreaterThan(0);
    expect(result.disclaimer).toBe(done.body.disclaimer);
    // Strictly point in time: every event's window closes by the run's as-of time.
    for (const e of result.events) expect(Date.parse(e.exit_at)).toBeLessThanOrEqual(Date.parse(done.body.as_of));
  });

  it('gives the same result for the same request', async () => {
    const body = { rules: [{ field: 'liquidity_usd', op: '>=', value: 10_000 }], horizon: '6h', cooldown: '24h', dead_token_policy: 'total_loss' };
    const a = await poll((await world.request('POST', '/v1/quant/backtests', { body })).headers.get('location')!);
    const b = await poll((await world.request('POST', '/v1/quant/backtests', { body })).headers.get('location')!);
    expect(a.body.status).toBe('done');
    expect(b.body.result).toEqual(a.body.result);
  });

  it("lists the key's runs newest first, and another key's run is 404", async () => {
    const list = await world.request('GET', '/v1/quant/backtests?limit=2');
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(2);
    expect(list.body.has_more).toBe(true);
    const next = await world.request('GET', `/v1/quant/backtests?limit=2&cursor=${list.body.next_cursor}`);
    expect(next.body.data.length).toBeGreaterThan(0);
    const created = [...list.body.data, ...next.body.data].map((r: { created_at: string }) => r.created_at);
    expect(created).toEqual([...created].sort().reverse());
    const theirs = list.body.data[0].id;
    world.expectError(await world.request('GET', `/v1/quant/backtests/${theirs}`, { key: world.keys.pro }), 404, 'NOT_FOUND');
    world.expectError(await world.request('POST', `/v1/quant/backtests/${theirs}/cancel`, { key: world.keys.pro }), 404, 'NOT_FOUND');
    world.expectError(await world.request('GET', '/v1/quant/backtests/btr_000000000000000000000000'), 404, 'NOT_FOUND');
    const mine = await world.request('GET', '/v1/quant/backtests', { key: world.keys.pro });
    expect(mine.body.data.map((r: { id: string }) => r.id)).not.toContain(theirs);
  });

  it('answers 402 PLAN_REQUIRED on the Free plan, before looking at the body', async () => {
    world.expectError(await world.request('POST', '/v1/quant/backtests', { key: world.keys.free, body: BODY }), 402, 'PLAN_REQUIRED');
    world.expectError(await world.request('POST', '/v1/quant/backtests', { key: world.keys.free, body: {} }), 402, 'PLAN_REQUIRED');
  });

  it('needs research:write to queue and research:read to read', async () => {
    const reader = await world.createKey('team', ['research:read'], 'research reader');
    world.expectError(await world.request('POST', '/v1/quant/backtests', { key: reader.key, body: BODY }), 403, 'FORBIDDEN');
    expect((await world.request('GET', '/v1/quant/backtests', { key: reader.key })).status).toBe(200);
  });

  const rule = (i: number) => ({ field: 'momentum', op: '>', value: i });
  const INVALID: [string, unknown, string][] = [
    ['no rules', { horizon: '24h' }, 'body.rules'],
    ['empty rules', { rules: [], horizon: '24h' }, 'body.rules'],
    ['13 rules', { rules: Array.from({ length: 13 }, (_, i) => rule(i)), horizon: '24h' }, 'body.rules'],
    ['an unknown rule field', { rules: [{ field: 'followers', op: '>', value: 1 }], horizon: '24h' }, 'body.rules[0].field'],
    ['an unknown op', { rules: [{ field: 'momentum', op: '=', value: 1 }], horizon: '24h' }, 'body.rules[0].op'],
    ['a rule value that is not a number', { rules: [{ field: 'momentum', op: '>', value: '1' }], horizon: '24h' }, 'body.rules[0].value'],
    ['no horizon', { rules: RULES }, 'body.horizon'],
    ['an unknown horizon', { rules: RULES, horizon: '2h' }, 'body.horizon'],
    ['a name of 81 characters', { ...BODY, name: 'x'.repeat(81) }, 'body.name'],
    ['a from that is no time', { ...BODY, from: 'yesterday' }, 'body.from'],
    ['a negative unix time', { ...BODY, to: -5 }, 'body.to'],
    ['from after to', { ...BODY, from: '2026-03-30T00:00:00Z', to: '2026-03-29T00:00:00Z' }, 'body.to'],
    ['from equal to to', { ...BODY, from: 1_774_828_800, to: '2026-03-30T00:00:00Z' }, 'body.to'],
    ['an unknown cooldown', { ...BODY, cooldown: '2d' }, 'body.cooldown'],
    ['an unknown dead-token policy', { ...BODY, dead_token_policy: 'ignore' }, 'body.dead_token_policy'],
    ['an unknown chain', { ...BODY, universe: { chains: ['dogechain'] } }, 'body.universe.chains[0]'],
    ['a negative minimum liquidity', { ...BODY, universe: { min_liquidity_usd: -1 } }, 'body.universe.min_liquidity_usd'],
    ['an unknown universe field', { ...BODY, universe: { sector: 'ai' } }, 'body.universe.sector'],
    ['an unknown body field', { ...BODY, limit: 10 }, 'body.limit'],
  ];
  it.each(INVALID)('refuses %s with VALIDATION at its path', async (_, body, path) => {
    const res = await world.request('POST', '/v1/quant/backtests', { body });
    world.expectError(res, 400, 'VALIDATION');
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
  });

  it('refuses a body that is not JSON, and a malformed run id', async () => {
    world.expectError(await world.request('POST', '/v1/quant/backtests', { rawBody: '{"rules":' }), 400, 'VALIDATION');
    const res = await world.request('GET', '/v1/quant/backtests/run_1');
    world.expectError(res, 400, 'VALIDATION');
    expect(res.body.error.details.issues[0].path).toBe('path.id');
  });

  it('documents the limits, the cancel and the research scopes in /openapi.json', () => {
    const post = world.openapi.paths['/v1/quant/backtests'].post;
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(['202', '400', '402', '409']));
    expect(post.description).toContain('LIMIT_REACHED');
    expect(post.responses['202'].headers.Location.schema).toEqual({ type: 'string' });
    expect(post['x-required-scope']).toBe('research:write');
    expect(world.openapi.paths['/v1/quant/backtests/{id}/cancel'].post['x-required-scope']).toBe('research:write');
    expect(world.openapi.paths['/v1/quant/event-studies/{slug}'].get['x-required-scope']).toBe('research:read');
  });
});

describe('event studies', () => {
  it('serves the six studies with per-horizon distributions as of the last hour boundary of the data', async () => {
    const studies = await waitFor(async () => {
      const res = await world.request('GET', '/v1/quant/event-studies');
      expect(res.status).toBe(200);
      return res.body.data.every((s: { as_of: string | null }) => s.as_of !== null) && res.body;
    }, 'the first refresh of the event studies', 240_000);
    expect(studies.data.map((s: { slug: string }) => s.slug)).toEqual(EVENT_STUDIES.map((s) => s.slug));
    expect(studies.data.map((s: { slug: string }) => s.slug).sort()).toEqual(
      ['velocity-3x', 'hq-authors-converge', 'social-up-price-flat', 'crowding-spike', 'broad-attention', 'cooling'].sort(),
    );
    for (const { slug, as_of } of studies.data) {
      expect(new Date(as_of).getUTCMinutes()).toBe(0);
      expect(Date.parse(as_of)).toBeLessThanOrEqual(world.endMs);
      const res = await world.request('GET', `/v1/quant/event-studies/${slug}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'event_study', slug, as_of, disclaimer: expect.any(String) });
      expect(res.body.horizons.map((h: { horizon: string }) => h.horizon)).toEqual(['15m', '1h', '6h', '24h', '3d', '7d']);
      for (const h of res.body.horizons) {
        expect(h).toHaveProperty('baseline');
        expect(h).toHaveProperty('abnormal_mean_return');
        expect(h).toHaveProperty('hit_rate');
      }
    }
    const oneDay = (await world.request('GET', '/v1/quant/event-studies/velocity-3x')).body.horizons.find((h: { horizon: string }) => h.horizon === '24h');
    expect(oneDay.baseline.n).toBeGreaterThan(0);
    world.expectError(await world.request('GET', '/v1/quant/event-studies/moon-shot'), 404, 'NOT_FOUND');
  }, 300_000);
});
