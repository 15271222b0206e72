import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoleContext } from '../../cli/roles/role.ts';
import { onWorkerThread } from '../../cli/roles/worker-thread.ts';
import { loadConfig } from '../../infra/config.ts';
import { silentLogger } from '../helpers/runtime-fixture.ts';

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
});
