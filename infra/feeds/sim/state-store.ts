import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../fs/atomic-write.ts';
import { REGIMES, type GroundTruth, type SimState } from './engine.ts';

/**
 * Where a simulation keeps itself between runs, in `<dataDir>/sim/`:
 * - state.json: the simulator as of the start of its current step, plus how many of that
 *   step's records are already in the log (`skip`). Resuming regenerates the step and
 *   skips those, so live continues exactly where history or the last live run stopped.
 * - ground-truth.json: hidden author types and token regimes, for evaluation only; it is
 *   never produced to a topic.
 */

export interface SavedSim {
  sim: SimState;
  skip: number;
}

const regime = z.enum(REGIMES);
const u32 = z.number().int().min(0).max(0xffffffff);

const SavedSimSchema = z.object({
  version: z.literal(1),
  skip: z.number().int().min(0),
  sim: z.object({
    version: z.literal(1),
    world: z.object({
      seed: z.number().int(),
      tokens: z.number().int().min(1),
      authors: z.number().int().min(1),
      startMs: z.number().int(),
    }),
    clockMs: z.number().int(),
    rng: z.tuple([u32, u32, u32, u32]),
    seq: z.number().int().min(0),
    tokens: z.array(
      z.object({
        live: z.boolean(),
        regime,
        regimeStart: z.number(),
        regimeEnd: z.number(),
        next: regime,
        drift: z.number(),
        liqDrift: z.number(),
        logPrice: z.number(),
        logLiq: z.number(),
        lastPriceMs: z.number(),
        lastTickMs: z.number(),
        nextTickMs: z.number(),
        surge: z.number(),
      }),
    ),
    regimeLog: z.array(z.array(z.tuple([regime, z.number()]))),
  }),
});

export function simDir(dataDir: string): string {
  return join(dataDir, 'sim');
}

export function stateFile(dataDir: string): string {
  return join(simDir(dataDir), 'state.json');
}

export function groundTruthFile(dataDir: string): string {
  return join(simDir(dataDir), 'ground-truth.json');
}

/** The saved simulation of a data dir, or null if none was ever saved there. */
export async function loadSimState(dataDir: string): Promise<SavedSim | null> {
  let text: string;
  try {
    text = await readFile(stateFile(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const parsed = SavedSimSchema.safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new Error(`${stateFile(dataDir)} is not a simulator state: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  }
  return { sim: parsed.data.sim, skip: parsed.data.skip };
}

export async function saveSimState(dataDir: string, saved: SavedSim, truth: GroundTruth): Promise<void> {
  await mkdir(simDir(dataDir), { recursive: true });
  await writeFileAtomic(groundTruthFile(dataDir), JSON.stringify(truth));
  await writeFileAtomic(stateFile(dataDir), JSON.stringify({ version: 1, skip: saved.skip, sim: saved.sim }));
}
