import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEY_FILE } from '../../api/demo-key.ts';
import { openLogServices } from '../../infra/bootstrap.ts';
import { freePorts } from '../../infra/peers/clickhouse-server.ts';
import { loadConfig } from '../../infra/config.ts';
import { waitFor } from '../../infra/wait.ts';
import { CATALOGUE } from '../../schemas/catalogue.ts';
import { inputInHalves } from '../helpers/read-topic.ts';
import { engineJoins, engineProgress, engineRestores, holdsEngine, killEngineHolderWithInputLeft, RoleProcesses, type RoleProcess } from '../helpers/role-processes.ts';

/**
 * The distributed mode as the README tells a user to run it without Docker: `tqa peers`
 * (the Kafka mock broker, a schema registry, ClickHouse), a simulated history, then the roles
 * as separate processes, two of them processors, each on a data dir of its own as on two
 * machines. The processors process holding the engine's group is killed with -9 once it has
 * committed a checkpoint, with the second half of the history just appended; the other takes
 * over, its state restored from the engine's changelog (no state is shared but the log). The API's answers at the end equal those of the
 * embedded mode over the same history, run without the fault.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
// Small enough for the mock broker, which keeps about 5 MB per partition.
const WORLD = ['--days', '1', '--seed', '777', '--tokens', '20', '--authors', '120', '--end', '2026-05-01T00:00:00Z'];

const roles = new RoleProcesses();
const dirs: string[] = [];

async function newDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-dist-'));
  dirs.push(dir);
  return dir;
}

/** Env for a role process on `dataDir`, its API on a free port. */
async function roleEnv(dataDir: string, extra: Record<string, string>): Promise<{ env: NodeJS.ProcessEnv; api: string }> {
  const [port, streamPort] = await freePorts(2);
  const env = { ...process.env, TQA_DATA_DIR: dataDir, TQA_SIM: 'off', PORT: String(port), STREAM_PORT: String(streamPort), LOG_LEVEL: 'info', ...extra };
  return { env, api: `http://127.0.0.1:${port}` };
}

/** Waits until the API says every stage has worked through the whole log, then reads the answers compared between the modes. */
async function answers(api: string, dataDir: string) {
  await waitFor(async () => {
    const res = await fetch(`${api}/v1/health`).catch(() => null);
    if (res?.status !== 200) return false;
    // `ok` allows a small lag (a processor commits at its checkpoints): the answers need none.
    const health = (await res.json()) as { status: string; processing: { lag_records: number } | null };
    return health.status === 'ok' && health.processing?.lag_records === 0;
  }, `${api}/v1/health to say ok with no lag`, 240_000);
  const key = await waitFor(async () => (await readFile(join(dataDir, DEMO_KEY_FILE), 'utf8').catch(() => '')).trim() || undefined, 'the demo key');
  const get = async (path: string) => {
    const res = await fetch(`${api}${path}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return ((await res.json()) as { data: unknown }).data;
  };
  // The demo key is projected a moment after the API starts.
  await waitFor(async () => (await fetch(`${api}/v1/key`, { headers: { Authorization: `Bearer ${key}` } })).status === 200, 'the demo key to work');
  return {
    tokens: await get('/v1/quant/tokens?limit=100'),
    signals: await get('/v1/quant/signals?limit=100'),
  };
}

describe('the distributed roles as separate processes on tqa peers', () => {
  let peersEnv: Record<string, string>;

  beforeAll(async () => {
    const dir = await newDir();
    const envFile = join(dir, 'peers.env');
    const peers = roles.start(['peers', '--write-env', envFile], process.env);
    const text = await waitFor(async () => (await readFile(envFile, 'utf8').catch(() => '')) || undefined, 'tqa peers to write its settings', 120_000);
    peersEnv = Object.fromEntries(text.trim().split('\n').map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]));
    expect(Object.keys(peersEnv)).toEqual(
      expect.arrayContaining(['TQA_LOG', 'TQA_STORE', 'KAFKA_BROKERS', 'KAFKA_IDEMPOTENT', 'SCHEMA_REGISTRY_URL', 'CLICKHOUSE_URL']),
    );
    expect(peers.child.exitCode).toBeNull();
  }, 180_000);

  afterAll(async () => {
    // Left running by a failed test: the roles first, since they stop cleanly only while the peers run.
    await roles.stopAll((proc) => proc.child.spawnargs.includes('peers'));
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('answers as the embedded mode does after the processors process holding the engine is killed with -9', async () => {
    // One simulated history, in the embedded log of the reference run; the distributed run gets
    // it in two halves by event time, the first once the processes have joined, the second just before the kill.
    const embeddedDir = await newDir();
    const embedded = await roleEnv(embeddedDir, { TQA_LOG: 'embedded', TQA_STORE: 'duckdb' });
    await run(process.execPath, ['bin/tqa.js', 'sim', 'history', ...WORLD], { cwd: ROOT, env: embedded.env });
    const distDir = await newDir();
    const dist = await roleEnv(distDir, peersEnv);
    const seeded = await openLogServices(loadConfig(embedded.env), pino({ level: 'silent' }));
    const kafka = await openLogServices(loadConfig(dist.env), pino({ level: 'silent' }));
    const history = await inputInHalves(seeded, kafka, CATALOGUE.map((t) => t.name));
    await seeded.close();

    // A checkpoint at every chunk of outputs, whatever a save costs, so that the engine commits part of its input well before its end.
    // Each processors process has a data dir of its own: what they share is the log.
    // Each answers an orchestrator's probe on a health port of its own.
    const healthPorts = await freePorts(2);
    const processorsEnv = async (i: number) => ({ ...dist.env, TQA_DATA_DIR: await newDir(), TQA_CHECKPOINT_INTERVAL_MS: '0', TQA_CHECKPOINT_SAVE_SHARE: '1', TQA_HEALTH_PORT: String(healthPorts[i]) });
    const processors = [roles.start(['start', '--roles', 'processors'], await processorsEnv(0)), roles.start(['start', '--roles', 'processors'], await processorsEnv(1))];
    const front = roles.start(['start', '--roles', 'projections,api'], dist.env);
    let atKill: { committed: number; end: number };
    let holder: RoleProcess;
    try {
      holder = await killEngineHolderWithInputLeft(roles, processors, kafka.log, history);
      // Read after the kill: a commit the holder sent just before its last stop has landed by now.
      atKill = await engineProgress(kafka.log);
    } finally {
      await kafka.close();
    }
    expect(atKill.committed, 'killed while the engine had input left').toBeLessThan(atKill.end);
    const standby = processors.find((p) => p !== holder)!;
    const distributed = await answers(dist.api, distDir);
    expect(standby.child.exitCode, standby.stderr().slice(-2000)).toBeNull();
    expect(holdsEngine(standby), `the standby took the engine over; its last joins of the engine's group:\n${engineJoins(standby).slice(-3).join('\n')}`).toBe(true);
    expect(Math.max(0, ...engineRestores(standby).map((r) => r.restoredRecords)), "the standby restored the engine's state from its changelog").toBeGreaterThan(0);
    const health = await fetch(`http://127.0.0.1:${healthPorts[processors.indexOf(standby)]}/healthz`);
    expect(health.status).toBe(200);
    // With their state in changelogs, the processors need no store.
    const report = await health.json();
    expect(report).toMatchObject({ status: 'ok', roles: ['processors'] });
    expect(report.providers.map((p: { name: string; status: string }) => `${p.name} ${p.status}`)).toEqual(['event_log ok']);
    expect(front.child.exitCode, front.stderr().slice(-2000)).toBeNull();

    const reference = roles.start(['start', '--roles', 'processors,projections,api'], embedded.env);
    const expected = await answers(embedded.api, embeddedDir);
    for (const proc of [standby, front, reference]) expect(await roles.stop(proc, 'SIGTERM'), proc.stderr().slice(-2000)).toBe(0);

    expect((distributed.tokens as unknown[]).length).toBeGreaterThan(10);
    expect((distributed.signals as unknown[]).length).toBeGreaterThan(0);
    expect(distributed).toEqual(expected);
  }, 600_000);

  it('stops every peer when tqa peers is killed with -9', async () => {
    const peers = roles.all().find((p) => p.child.spawnargs.includes('peers'))!;
    const clickhouse = peersEnv.CLICKHOUSE_URL;
    expect((await fetch(`${clickhouse}/?query=SELECT%201`)).ok).toBe(true);
    await roles.stop(peers, 'SIGKILL');
    // The broker and ClickHouse sit behind guards that end them when their parent's pipe closes.
    await waitFor(async () => (await fetch(`${clickhouse}/?query=SELECT%201`).catch(() => null)) === null, 'ClickHouse to stop', 30_000);
    const [host, port] = peersEnv.KAFKA_BROKERS.split(':');
    await waitFor(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = connect(Number(port), host);
          socket.once('connect', () => (socket.destroy(), resolve(false)));
          socket.once('error', () => resolve(true));
        }),
      'the mock broker to stop',
      30_000,
    );
  }, 60_000);
});
