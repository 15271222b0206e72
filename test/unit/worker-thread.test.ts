import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role, RoleContext, RunningRole } from '../../cli/roles/role.ts';
import { onWorkerThread } from '../../cli/roles/worker-thread.ts';
import { loadConfig, type Config } from '../../infra/config.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';

/** Starts `role` with a `failed` that resolves `failure` with what it is told. */
async function startTellingFailure(role: Role, config: Config): Promise<{ running: RunningRole; failure: Promise<unknown> }> {
  let failed: (err: unknown) => void = () => undefined;
  const failure = new Promise<unknown>((resolve) => (failed = resolve));
  const running = await role.start({ config, logger: silentLogger, failed } as unknown as RoleContext);
  return { running, failure };
}

describe('a role on a worker thread', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-thread-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('ends its thread when stopped, even if the role left a timer running', async () => {
    const config = loadConfig({ TQA_DATA_DIR: dir, TQA_SIM: 'off', LOG_LEVEL: 'silent' });
    const role = onWorkerThread('leaves-a-timer', new URL('../fixtures/role-leaving-a-timer.ts', import.meta.url), 'roleLeavingATimer');
    const running = await role.start({ config, logger: silentLogger } as unknown as RoleContext);
    // stop() resolves once the thread has exited; with the timer keeping it alive, never by itself.
    await expect(running.stop()).resolves.toBeUndefined();
  }, 60_000);

  it('tells `failed` when its thread fails after the start, and its stop still resolves on the thread already ended', async () => {
    const config = loadConfig({ TQA_DATA_DIR: dir, TQA_SIM: 'off', LOG_LEVEL: 'silent' });
    const role = onWorkerThread('fails-after-start', new URL('../fixtures/role-failing-after-start.ts', import.meta.url), 'roleFailingAfterStart');
    const { running, failure } = await startTellingFailure(role, config);
    await expect(failure).resolves.toMatchObject({ message: 'the role failed by itself' });
    await expect(running.stop()).resolves.toBeUndefined();
  }, 60_000);

  it('tells `failed` what its role reported as its own failure, and stops it when asked', async () => {
    const config = loadConfig({ TQA_DATA_DIR: dir, TQA_SIM: 'off', LOG_LEVEL: 'silent' });
    const role = onWorkerThread('reports-a-failure', new URL('../fixtures/role-reporting-a-failure.ts', import.meta.url), 'roleReportingAFailure');
    const { running, failure } = await startTellingFailure(role, config);
    await expect(failure).resolves.toMatchObject({ name: 'Error', message: 'the role gave up', stack: expect.stringContaining('role-reporting-a-failure.ts') });
    await expect(running.stop()).resolves.toBeUndefined();
  }, 60_000);

  it('runs its module bundled into JavaScript, which still names its source: its location, and in stack traces', async () => {
    const config = loadConfig({ TQA_DATA_DIR: dir, TQA_SIM: 'off', LOG_LEVEL: 'silent' });
    const source = new URL('../fixtures/role-telling-its-location.ts', import.meta.url);
    const role = onWorkerThread('tells-its-location', source, 'roleTellingItsLocation');
    await (await role.start({ config, logger: silentLogger } as unknown as RoleContext)).stop();
    const told = JSON.parse(await readFile(join(dir, 'location.json'), 'utf8')) as { url: string; dirname: string; loadedFrom: string; stack: string };
    expect(told.loadedFrom).toMatch(/\/node_modules\/\.cache\/tqa\/threads\/[0-9a-f]{16}\/test\/fixtures\/role-telling-its-location\.js$/);
    expect({ url: told.url, dirname: told.dirname }).toEqual({ url: source.href, dirname: dirname(fileURLToPath(source)) });
    // The bundle's source map: the frame names the TypeScript file, not the bundle.
    expect(told.stack.split('\n')[1]).toContain(`${fileURLToPath(source)}:`);
  }, 60_000);
});
