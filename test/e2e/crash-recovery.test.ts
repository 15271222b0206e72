import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { seedHistory } from '../../infra/feeds/sim/runner.ts';
import { openEmbedded } from '../helpers/runtime-fixture.ts';
import { derivedCount, expectKillsLanded, expectSameOutputs, killStartedRoles, runWithFaults, runWithoutFaults, type World } from './crash-recovery.scenario.ts';

const WORLD = { seed: 31, days: 3, endMs: Date.UTC(2026, 4, 1), tokens: 40, authors: 200 };

describe('kill -9 of the engine and the projections during a catch-up, on the embedded log', () => {
  const worlds: World[] = [];
  afterAll(async () => {
    await killStartedRoles();
    for (const world of worlds) {
      await world.log.close();
      await rm(world.dir, { recursive: true, force: true });
    }
  });

  async function seededWorld(): Promise<World> {
    const dir = await mkdtemp(join(tmpdir(), 'tqa-crash-'));
    const { log, codec } = await openEmbedded(dir);
    const world = { dir, log, codec, env: { TQA_DATA_DIR: dir, TQA_LOG: 'embedded' }, killCheckpointMs: 300, standby: true };
    worlds.push(world);
    await seedHistory({ log, codec, dataDir: dir, ...WORLD });
    return world;
  }

  it('loses and changes no derived record and no stored row, whenever the kills land', async () => {
    const reference = await runWithoutFaults(await seededWorld());
    const expected = derivedCount(reference);
    expect(expected).toBeGreaterThan(1000);
    const faulty = await runWithFaults(await seededWorld(), reference);

    expectKillsLanded(faulty, expected);
    expectSameOutputs(faulty.outputs, reference);
  }, 600_000);
});
