import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type Api } from '../../api/app.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { keysCommand } from '../../cli/commands/keys.ts';
import { teamsCommand } from '../../cli/commands/teams.ts';
import { cohortsCommand } from '../../cli/commands/cohorts.ts';
import { KEY_CACHE_TTL_MS } from '../../api/keys.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { Codec } from '../../schemas/codec.ts';
import { openStore } from '../../projections/open-store.ts';
import type { AnalyticalStore } from '../../infra/store/port.ts';
import type { ProjectionTables } from '../../projections/tables.ts';
import { openEmbedded, silentLogger } from '../helpers/runtime-fixture.ts';
import { sink } from '../helpers/sink.ts';

/** The start of a clock minute, so tests know where the rate-limit window ends. */
const T0 = 1_800_000_000_000;
const RATE_HEADERS = [
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'ratelimit-policy',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

let dir: string;
let config: Config;
let log: FileEventLog;
let codec: Codec;
let store: AnalyticalStore<ProjectionTables>;
let server: Server;
let api: Api;
let base: string;
let now = T0;

async function run(command: typeof keysCommand, args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = sink();
  const err = sink();
  try {
    const code = await command.run(args, { config, logger: silentLogger, stdout: out.stream, stderr: err.stream });
    return { code, out: out.text(), err: err.text() };
  } catch (e) {
    // What the CLI's main makes of a usage mistake: its message and exit code 2.
    if (e instanceof UsageError) return { code: 2, out: out.text(), err: e.message };
    throw e;
  }
}

async function cli(...args: string[]): Promise<string> {
  const { code, out, err } = await run(keysCommand, args);
  expect(code, err).toBe(0);
  return out;
}

/** Creates a key through the CLI; every test uses it at once, as soon as the command returned. */
async function createKey(plan: string, scopes: string, name = `test ${plan}`, ...more: string[]): Promise<{ id: string; key: string }> {
  return JSON.parse(await cli('create', '--plan', plan, '--scopes', scopes, '--name', name, '--json', ...more)) as { id: string; key: string };
}

function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Response> {
  return fetch(base + path, { method, headers });
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

async function expectError(res: Response, status: number, code: string): Promise<void> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; message: string; request_id: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message).toEqual(expect.any(String));
  expect(body.error.request_id).toMatch(/^req_[0-9a-f]+$/);
  expect(res.headers.get('x-request-id')).toBe(body.error.request_id);
  for (const h of RATE_HEADERS) expect(res.headers.get(h), h).not.toBeNull();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-auth-'));
  config = loadConfig({ TQA_DATA_DIR: dir });
  const embedded = await openEmbedded(dir);
  ({ log, codec } = embedded);
  store = await openStore(config, silentLogger);
  const consoleDir = join(dir, 'console');
  await mkdir(consoleDir);
  await writeFile(join(consoleDir, 'index.html'), '<!doctype html><title>console</title>');
  api = createApi({ log, codec, store, startedAt: T0, logger: silentLogger, now: () => now, consoleDir });
  server = api.app.listen(0);
  await new Promise<void>((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await api?.close();
  await store?.close();
  await log?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('API keys, scopes, plans and rate limits', () => {
  it('accepts a CLI-created key in both header forms and describes it on GET /v1/key', async () => {
    now = T0;
    const { id, key } = await createKey('pro', 'keys:read,quant:read', 'dashboard');
    expect(key).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    for (const headers of [bearer(key), { 'x-api-key': key }]) {
      const res = await get('/v1/key', headers);
      expect(res.status).toBe(200);
      for (const h of RATE_HEADERS) expect(res.headers.get(h), h).not.toBeNull();
      expect(res.headers.get('ratelimit-limit')).toBe('600');
      expect(res.headers.get('ratelimit-policy')).toBe('600;w=60');
      expect(res.headers.get('x-ratelimit-reset')).toBe(String((T0 + 60_000) / 1000));
      expect(res.headers.get('ratelimit-reset')).toBe('60');
      expect(await res.json()).toMatchObject({
        object: 'key',
        id,
        name: 'dashboard',
        dataset: 'live',
        livemode: true,
        mode: 'live',
        scopes: ['keys:read', 'quant:read'],
        plan: 'pro',
        plan_limits: { rate_limit: { limit: 600, window_seconds: 60 }, features: { backtests: true, concurrent_backtests: 2, scanner_delay_minutes: 0, webhooks: 10, history_days: 30 } },
        rate_limit: { limit: 600, window_seconds: 60 },
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    }
    const listed = JSON.parse(await cli('list', '--json')) as { id: string; revoked_at: string | null }[];
    expect(listed).toContainEqual(expect.objectContaining({ id, revoked_at: null }));
  });

  it('refuses missing, malformed and unknown keys with 401 and the error body', async () => {
    now = T0 + 120_000;
    await expectError(await get('/v1/key'), 401, 'UNAUTHORIZED');
    await expectError(await get('/v1/key', { Authorization: 'Basic abc' }), 401, 'UNAUTHORIZED');
    await expectError(await get('/v1/key', { 'x-api-key': 'svc_live_short' }), 401, 'UNAUTHORIZED');
    await expectError(await get('/v1/key', bearer(`svc_live_${'A'.repeat(43)}`)), 401, 'UNAUTHORIZED');
  });

  it('refuses a revoked key once the API has read the log since the revoke, within the cache bound', async () => {
    now = T0 + 180_000;
    const { id, key } = await createKey('free', 'keys:read');
    expect((await get('/v1/key', bearer(key))).status).toBe(200);
    await cli('revoke', id);
    // Served from the key cache until the entry expires (1 s on the injected clock): the bound.
    expect((await get('/v1/key', bearer(key))).status).toBe(200);
    now += KEY_CACHE_TTL_MS;
    const res = await get('/v1/key', bearer(key));
    await expectError(res, 401, 'UNAUTHORIZED');
    const listed = JSON.parse(await cli('list', '--json')) as { id: string; revoked_at: string | null }[];
    expect(listed.find((k) => k.id === id)?.revoked_at).toEqual(expect.any(String));
  });

  it('puts keys in teams: GET /v1/key shows the team, a cohort is shared only with its owner\'s team', async () => {
    now = T0 + 240_000;
    const made = await run(teamsCommand, ['create', '--name', 'Research desk', '--json']);
    expect(made.code, made.err).toBe(0);
    const team = JSON.parse(made.out) as { id: string; name: string };
    expect(team.id).toMatch(/^team_[0-9a-f]+$/);
    const member = await createKey('team', 'keys:read', 'desk key', '--team', team.id);
    const loner = await createKey('team', 'keys:read', 'no team');

    expect(await (await get('/v1/key', bearer(member.key))).json()).toMatchObject({ id: member.id, team: { id: team.id, name: 'Research desk' } });
    expect(await (await get('/v1/key', bearer(loner.key))).json()).toMatchObject({ id: loner.id, team: null });
    expect(JSON.parse(await cli('list', '--json'))).toContainEqual(expect.objectContaining({ id: member.id, team_id: team.id }));

    const unknownTeam = await run(keysCommand, ['create', '--plan', 'pro', '--name', 'x', '--team', 'team_00000000']);
    expect([unknownTeam.code, unknownTeam.err]).toEqual([2, expect.stringContaining('no team team_00000000')]);
    // Sharing with a team the owner is not in is refused before anything is appended.
    const crossing = await run(cohortsCommand, ['create', '--name', 'watch', '--owner', loner.id, '--team', team.id]);
    expect([crossing.code, crossing.err]).toEqual([2, expect.stringContaining(`${loner.id} is not in team ${team.id}`)]);
    const sharing = await run(cohortsCommand, ['create', '--name', 'watch', '--owner', member.id, '--team', team.id, '--json']);
    expect(sharing.code, sharing.err).toBe(0);
  });

  it('answers 403 without the scope and 402 when the plan lacks the feature', async () => {
    now = T0 + 240_000;
    const readOnly = await createKey('pro', 'quant:read');
    await expectError(await get('/v1/key', bearer(readOnly.key)), 403, 'FORBIDDEN');
    await expectError(await get('/v1/quant/backtests', bearer(readOnly.key), 'POST'), 403, 'FORBIDDEN');
    const free = await createKey('free', 'research:write');
    await expectError(await get('/v1/quant/backtests', bearer(free.key), 'POST'), 402, 'PLAN_REQUIRED');
    // Past the guards, the body is looked at: an empty one is invalid.
    const team = await createKey('team', 'research:write');
    await expectError(await get('/v1/quant/backtests', bearer(team.key), 'POST'), 400, 'VALIDATION');
  });

  it('limits a key to its plan per 60 s window with 429 and Retry-After, then recovers', async () => {
    now = T0 + 300_000;
    const { key } = await createKey('free', 'keys:read');
    for (let i = 1; i <= 60; i++) {
      const res = await get('/v1/key', bearer(key));
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(60 - i));
    }
    now += 15_000;
    const limited = await get('/v1/key', bearer(key));
    expect(limited.headers.get('retry-after')).toBe('45');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    await expectError(limited, 429, 'RATE_LIMITED');
    now += 45_000;
    const recovered = await get('/v1/key', bearer(key));
    expect(recovered.status).toBe(200);
    expect(recovered.headers.get('ratelimit-remaining')).toBe('59');
    expect(recovered.headers.get('retry-after')).toBeNull();
  });

  it('answers 503 UPSTREAM_UNAVAILABLE with every header when the keys cannot be read from the log', async () => {
    now = T0 + 660_000;
    const unreadable = (): Promise<never> => Promise.reject(new Error('the log is unreachable'));
    const downLog = Object.create(log, { startOffsets: { value: unreadable }, read: { value: unreadable } }) as FileEventLog;
    const down = createApi({ log: downLog, codec, store, startedAt: T0, logger: silentLogger, now: () => now });
    const downServer = down.app.listen(0);
    await new Promise<void>((resolve) => downServer.once('listening', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(downServer.address() as AddressInfo).port}/v1/key`, {
        headers: bearer(`svc_live_${'C'.repeat(43)}`),
      });
      await expectError(res, 503, 'UPSTREAM_UNAVAILABLE');
    } finally {
      await new Promise<void>((resolve) => downServer.close(() => resolve()));
      await down.close();
    }
  });

  it('keeps public endpoints keyless and limited per IP', async () => {
    now = T0 + 600_000;
    const res = await get('/v1/health');
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe('120');
    expect(res.headers.get('ratelimit-policy')).toBe('120;w=60');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    for (let i = 2; i <= 120; i++) expect((await get('/v1/health')).status).toBe(200);
    const limited = await get('/v1/health');
    expect(limited.headers.get('retry-after')).toBe('60');
    await expectError(limited, 429, 'RATE_LIMITED');
    // The console's files are not: its page loads though its address has spent its limit.
    const page = await get('/console/');
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>console</title>');
  });
});
