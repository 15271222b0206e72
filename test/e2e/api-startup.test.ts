import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY_FILE } from '../../api/demo-key.ts';
import { SCOPE_NAMES } from '../../api/scopes.ts';
import { freePorts } from '../../infra/peers/clickhouse-server.ts';
import { signalGroup } from '../../infra/peers/peer-process.ts';
import { waitFor } from '../../infra/wait.ts';

/**
 * `tqa start` as a user runs it, on an empty data dir: the API answers within seconds while
 * the simulated history is still being seeded, and the first start (only) prints a demo key
 * that works as soon as it is printed.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

interface Service {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit code, or the signal that ended the process. */
  exited: Promise<number | NodeJS.Signals | null>;
}

let dir: string;
let env: NodeJS.ProcessEnv;
let base: string;
const running = new Set<Service>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-startup-'));
  const [port, streamPort] = await freePorts(2);
  base = `http://127.0.0.1:${port}`;
  // A day of history seeds in a few seconds: long enough to find the API up before it is done.
  env = { ...process.env, TQA_DATA_DIR: dir, PORT: String(port), STREAM_PORT: String(streamPort), TQA_SIM_DAYS: '1', TQA_LOG: 'embedded', TQA_STORE: 'duckdb', TQA_SIM: 'auto', LOG_LEVEL: 'info' };
});

afterAll(async () => {
  for (const service of running) await stop(service, 'SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

function start(serviceEnv: NodeJS.ProcessEnv = env): Service {
  // Its own process group, so stopping it reaches every process it started.
  const child = spawn(process.execPath, ['bin/tqa.js', 'start'], { cwd: ROOT, env: serviceEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const service = { child, stdout: () => out, stderr: () => err, exited };
  running.add(service);
  return service;
}

async function stop(service: Service, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | NodeJS.Signals | null> {
  signalGroup(service.child, signal);
  const code = await service.exited;
  running.delete(service);
  return code;
}

/** The exit code of a service that should end by itself, or 'hung' (and it is killed) if it has not within `ms`. */
async function exitWithin(service: Service, ms: number): Promise<number | NodeJS.Signals | null | 'hung'> {
  const code = await Promise.race([service.exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), ms))]);
  if (code === 'hung') await stop(service, 'SIGKILL');
  else running.delete(service);
  return code;
}

interface TopicsReport {
  topics: { topic: string; groups: { group: string; members: { member: string }[] | null; partitions: { owner: string | null }[] }[] }[];
}

const logged = (service: Service, msg: string) => service.stderr().includes(`"msg":"${msg}"`);

async function getJson(path: string, key?: string): Promise<{ status: number; body: any } | null> {
  try {
    const res = await fetch(base + path, { headers: key ? { Authorization: `Bearer ${key}` } : {} });
    return { status: res.status, body: await res.json() };
  } catch {
    return null; // not listening yet
  }
}

describe('tqa start on an empty data dir', () => {
  it('answers /v1/health while seeding, and creates a working demo key on the first start only', async () => {
    const first = start();
    const health = await waitFor(async () => {
      const res = await getJson('/v1/health');
      return res?.status === 200 && res.body.processing !== null ? res.body : undefined;
    }, 'GET /v1/health to answer with the lags', 10_000);
    expect(logged(first, 'simulated history seeded'), 'health answered only after seeding').toBe(false);
    expect(health.providers.map((p: { status: string }) => p.status)).toEqual(['ok', 'ok']);
    // While the history is seeded the log is not whole: its lags say nothing yet.
    expect(health.status).toBe('catching_up');
    expect(health.processing.caught_up).toBe(false);

    const key = await waitFor(() => /^demo API key: (svc_live_[A-Za-z0-9_-]{43})$/m.exec(first.stdout())?.[1], 'the demo key on stdout');
    const file = join(dir, DEMO_KEY_FILE);
    expect((await readFile(file, 'utf8')).trim()).toBe(key);
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const described = await waitFor(async () => {
      const res = await getJson('/v1/key', key);
      return res?.status === 200 ? res.body : undefined;
    }, 'the demo key to be projected', 30_000);
    expect(described).toMatchObject({ object: 'key', plan: 'team', name: 'demo key' });
    expect([...described.scopes].sort()).toEqual([...SCOPE_NAMES].sort());
    expect(await stop(first)).toBe(0);

    const second = start();
    await waitFor(() => logged(second, 'service started'), 'the second start', 30_000);
    expect((await getJson('/v1/health'))?.status).toBe(200);
    expect(second.stdout()).not.toContain('demo API key');
    expect((await readFile(file, 'utf8')).trim()).toBe(key);
    expect(await stop(second)).toBe(0);

    const { stdout } = await run(process.execPath, ['bin/tqa.js', 'keys', 'list', '--json'], { cwd: ROOT, env });
    expect((JSON.parse(stdout) as { id: string }[]).map((k) => k.id)).toEqual([described.id]);
  }, 120_000);

  it.each(['STREAM_PORT', 'PORT'])('exits with code 1, stopping the roles already started, when %s is taken', async (setting) => {
    const [free, taken] = await freePorts(2);
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(taken, resolve));
    const failDir = await mkdtemp(join(tmpdir(), 'tqa-fail-'));
    try {
      const ports = setting === 'PORT' ? { PORT: String(taken), STREAM_PORT: String(free) } : { PORT: String(free), STREAM_PORT: String(taken) };
      const service = start({ ...env, TQA_DATA_DIR: failDir, ...ports });
      const code = await exitWithin(service, 60_000);
      expect(code).toBe(1);
      expect(service.stderr()).toContain('EADDRINUSE');
      // The start's own failure, after it stopped what it had started, not an unhandled error
      // ending the process under the store's thread.
      expect(logged(service, 'command failed')).toBe(true);
      expect(logged(service, 'service started')).toBe(false);
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
      await rm(failDir, { recursive: true, force: true });
    }
  }, 90_000);

  it('stops every role and exits with code 1 when a processor stops for good after the start', async () => {
    const brokenDir = await mkdtemp(join(tmpdir(), 'tqa-broken-'));
    const [port, streamPort] = await freePorts(2);
    const brokenEnv = { ...env, TQA_DATA_DIR: brokenDir, PORT: String(port), STREAM_PORT: String(streamPort), TQA_SIM: 'off' };
    try {
      await run(process.execPath, ['bin/tqa.js', 'sim', 'history', '--days', '1', '--tokens', '5', '--authors', '20'], { cwd: ROOT, env: brokenEnv });
      // The engine's group offsets, unreadable: its consumer fails once it has started, for good.
      await mkdir(join(brokenDir, 'log', '_groups'), { recursive: true });
      await writeFile(join(brokenDir, 'log', '_groups', 'quant-engine.json'), '{ not json');
      const service = start(brokenEnv);
      const code = await exitWithin(service, 60_000);
      expect(code, service.stderr().slice(-3000)).toBe(1);
      const lines = service.stderr().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { msg: string; processor?: string; failed?: boolean });
      const at = (msg: string) => lines.findIndex((line) => line.msg === msg);
      expect(lines.find((line) => line.msg === 'processor stopped')?.processor).toBe('quant-engine');
      // Reported by the engine's thread to the main one, which stops every role as on a signal.
      expect(at('the quant-engine thread failed')).toBeGreaterThan(-1);
      expect(lines.find((line) => line.msg === 'stopping')?.failed).toBe(true);
      expect(at('stopped')).toBeGreaterThan(at('stopping'));
    } finally {
      await rm(brokenDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('applies a key made or revoked during the catch-up as soon as the command returns, ahead of the backlog', async () => {
    // A week of history: the engine works through it for minutes, so the commands below run
    // while its input lag is large, as an operator's would on a first start.
    const weekDir = await mkdtemp(join(tmpdir(), 'tqa-catchup-'));
    const [port, streamPort] = await freePorts(2);
    const weekEnv = { ...env, TQA_DATA_DIR: weekDir, PORT: String(port), STREAM_PORT: String(streamPort), TQA_SIM_DAYS: '7' };
    const api = `http://127.0.0.1:${port}`;
    const tqa = async (...args: string[]) => (await run(process.execPath, ['bin/tqa.js', ...args], { cwd: ROOT, env: weekEnv })).stdout;
    const keyStatus = async (key: string) => (await fetch(`${api}/v1/key`, { headers: { Authorization: `Bearer ${key}` } })).status;
    const engineLag = async () => {
      const report = JSON.parse(await tqa('topics', '--json')) as { topics: { groups: { group: string; lag: number }[] }[] };
      return report.topics.flatMap((t) => t.groups).filter((g) => g.group === 'quant-engine').reduce((sum, g) => sum + g.lag, 0);
    };
    const service = start(weekEnv);
    try {
      await waitFor(() => logged(service, 'service started'), 'the service to start', 120_000);
      await waitFor(async () => (await engineLag()) > 100_000, 'the engine to have a backlog', 60_000);
      const health = await waitFor(async () => {
        const res = await fetch(`${api}/v1/health`);
        const body = (await res.json()) as { status: string; processing: { lag_records: number; stages: { name: string; lag_records: number }[] } | null };
        return body.processing !== null && body.processing.lag_records > 100_000 ? { code: res.status, ...body } : undefined;
      }, 'the health check to measure the backlog');
      expect(health.code, 'a service catching up is up').toBe(200);
      expect(health.status).toBe('catching_up');
      expect(health.processing!.stages.find((s) => s.name === 'quant-engine')!.lag_records).toBeGreaterThan(0);
      // The time left and each stage's rate, unknown (null) until measured for a while.
      expect(health.processing).toHaveProperty('time_left_seconds');
      expect(health.processing).toHaveProperty('most_behind');
      for (const stage of health.processing!.stages) expect(stage).toHaveProperty('rate_per_second');

      const made = JSON.parse(await tqa('keys', 'create', '--plan', 'pro', '--name', 'made during catch-up', '--json')) as { id: string; key: string };
      expect(await keyStatus(made.key)).toBe(200);
      // The revoke returns once every API has read the log since it (its key cache's bound).
      await tqa('keys', 'revoke', made.id);
      expect(await keyStatus(made.key)).toBe(401);
      expect(await engineLag(), 'the commands did not wait for the catch-up').toBeGreaterThan(0);

      // Who holds the engine's group: its thread in the service, every partition; after a kill -9, nobody.
      const engineGroup = async () => {
        const report = JSON.parse(await tqa('topics', '--json')) as TopicsReport;
        return report.topics.find((t) => t.topic === 'ingest.posts')!.groups.find((g) => g.group === 'quant-engine')!;
      };
      const held = await engineGroup();
      expect(held.members).toHaveLength(1);
      expect(held.members![0].member).toMatch(new RegExp(` pid ${service.child.pid} thread \\d+$`));
      expect(held.partitions.map((p) => p.owner)).toEqual([0, 1, 2, 3].map(() => held.members![0].member));
      expect(await tqa('topics')).toMatch(new RegExp(`group quant-engine: lag \\d+ \\[0:\\d+ 1:\\d+ 2:\\d+ 3:\\d+\\], 0,1,2,3 held by .* pid ${service.child.pid} thread`));
      await stop(service, 'SIGKILL');
      const orphaned = await engineGroup();
      expect(orphaned.members).toEqual([]);
      expect(orphaned.partitions.map((p) => p.owner)).toEqual([null, null, null, null]);
    } finally {
      await stop(service, 'SIGKILL');
      await rm(weekDir, { recursive: true, force: true });
    }
  }, 240_000);
});
