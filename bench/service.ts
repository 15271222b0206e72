import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { issueApiKey } from '../api/keys.ts';
import { SCOPE_NAMES } from '../api/scopes.ts';
import { openLogServices } from '../infra/bootstrap.ts';
import { loadConfig } from '../infra/config.ts';
import { freePorts } from '../infra/peers/clickhouse-server.ts';
import { exists } from '../infra/fs/exists.ts';
import { waitFor } from '../infra/wait.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** `tqa start` (what `npm start` runs) as a child process on a data dir of its own. */
export interface Service {
  base: string;
  /** Its data dir, for `tqa` commands run beside it as an operator would. */
  dataDir: string;
  /** Team keys made before the start, so a load spread over them never meets the rate limit. */
  keys: string[];
  /** When the simulated history was fully seeded (epoch ms), once it is. */
  seeded(): Promise<number | null>;
  /** The status and body of a GET, null while the API does not answer; throws once the service has exited. */
  get(path: string, key?: string): Promise<{ status: number; body: unknown } | null>;
  /** GET /v1/health's status and processing, null while the API does not answer. */
  health(): Promise<{ status: string; caughtUp: boolean | null; measuredAt: number | null } | null>;
  /** Resident set size now and at its peak, bytes (Linux /proc). */
  memory(): Promise<{ rss: number; peak: number }>;
  stop(): Promise<void>;
}

/**
 * Starts the service on a new data dir, with the environment a user gets by default (seven
 * simulated days, embedded log and store, fsync on) except `env`. The keys go into the log
 * before the start; the service still seeds its history, as on any data dir without one.
 */
export async function startService(keys: number, env: NodeJS.ProcessEnv = {}): Promise<Service> {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-bench-start-'));
  const issued: string[] = [];
  const services = await openLogServices(loadConfig({ TQA_DATA_DIR: dir }), pino({ level: 'warn' }));
  try {
    for (let i = 0; i < keys; i++) issued.push((await issueApiKey(services.log, services.codec, { name: `bench ${i}`, plan: 'team', scopes: SCOPE_NAMES, teamId: null })).key);
  } finally {
    await services.close();
  }
  const [port, streamPort] = await freePorts(2);
  const child = spawn(process.execPath, ['bin/tqa.js', 'start'], {
    cwd: ROOT,
    // In this process's group: an interrupt of the benchmark reaches the service too.
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, TQA_DATA_DIR: dir, PORT: String(port), STREAM_PORT: String(streamPort) },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const base = `http://127.0.0.1:${port}`;
  let seededAt: number | null = null;
  const get: Service['get'] = async (path, key) => {
    // A signal (the OOM killer's, say) leaves exitCode null.
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the service exited (${child.exitCode ?? child.signalCode}): ${stderr}`);
    try {
      const res = await fetch(base + path, { headers: key === undefined ? {} : { Authorization: `Bearer ${key}` } });
      return { status: res.status, body: await res.json() };
    } catch {
      return null; // not listening yet
    }
  };

  return {
    base,
    dataDir: dir,
    keys: issued,
    async seeded() {
      // The simulator's state is saved once the whole history is in the log.
      if (seededAt === null && (await exists(join(dir, 'sim', 'state.json')))) seededAt = Date.now();
      return seededAt;
    },
    get,
    async health() {
      const res = await get('/v1/health');
      if (res === null) return null;
      const body = res.body as { status: string; processing: { caught_up: boolean; measured_at: string } | null };
      return { status: body.status, caughtUp: body.processing?.caught_up ?? null, measuredAt: body.processing ? Date.parse(body.processing.measured_at) : null };
    },
    memory: () => processMemory(child),
    async stop() {
      process.removeListener('exit', killOnExit);
      child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Resident set size of a running process, now and at its peak (VmRSS, VmHWM), bytes. */
export async function processMemory(child: ChildProcess): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/**
 * GET /v1/health is keyless, limited per address (120 a minute): polled at most once a second,
 * a wait leaves room for the benchmark's other keyless requests (the console's first page).
 */
const HEALTH_POLL_MS = 1_000;

/** Until /v1/health says `ok` from a measurement taken after the whole simulated history was seeded. */
export async function untilCaughtUp(service: Service, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const seededAt = await service.seeded();
      const health = await service.health();
      return seededAt !== null && health?.status === 'ok' && health.caughtUp === true && health.measuredAt !== null && health.measuredAt > seededAt;
    },
    'the service to catch up with its seeded history',
    timeoutMs,
    HEALTH_POLL_MS,
  );
}
