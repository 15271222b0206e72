import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS, main, type CliProcess } from '../../cli/main.ts';
import { fuzzRuns, hostileText } from '../helpers/fuzz.ts';
import { sink } from '../helpers/sink.ts';

/**
 * Fuzzed command lines for every tqa command, run in process through the CLI's entry on an
 * empty data dir: the command's own words and flags mixed with hostile values. No run ends
 * in the "command failed" path (an exception the command did not turn into a message); a
 * nonzero exit says why on stderr, and a usage error (exit 2) shows the usage.
 */

/**
 * Commands that serve, follow or generate until stopped, or write into the working tree
 * (topology --update-docs), given fitting arguments: their command lines always carry an
 * unknown flag, so the fuzz reaches their argument parsing and no further.
 */
const UNBOUNDED = new Set(['start', 'stream', 'sim', 'peers', 'replay', 'topology']);

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tqa-cli-fuzz-'));
});

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** The words of a command's usage (subcommands, flags, placeholders), which the fuzz mixes with hostile values. */
function wordsOf(usage: string, name: string): string[] {
  return [...new Set(usage.match(/--?[a-z][a-z-]*|\b[a-z][a-z-]+\b/g) ?? [])].filter((w) => w !== 'tqa' && w !== name);
}

describe('fuzzed command lines', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))('tqa %s answers hostile arguments with a message, never an unhandled failure', async (name, command) => {
    const words = wordsOf(command.usage, name);
    const arg = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...words) }, { weight: 2, arbitrary: hostileText });
    const args = UNBOUNDED.has(name)
      ? fc.tuple(fc.array(arg, { maxLength: 5 }), fc.nat(5)).map(([a, at]) => [...a.slice(0, at), '--not-a-flag-of-tqa', ...a.slice(at)])
      : fc.array(arg, { minLength: 1, maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(args, async (argv) => {
        const stdout = sink();
        const stderr = sink();
        const logged = sink();
        const proc: CliProcess = {
          env: { TQA_DATA_DIR: dataDir },
          stdout: stdout.stream,
          stderr: stderr.stream,
          createLogger: (level) => pino({ level }, logged.stream),
        };
        const code = await main([name, ...argv], proc);
        expect(logged.text(), `tqa ${name} ${JSON.stringify(argv)}`).not.toContain('command failed');
        if (code !== 0) expect(stderr.text() + logged.text(), `tqa ${name} ${JSON.stringify(argv)} exits ${code}`).toMatch(/\S/);
        if (code === 2) expect(stderr.text()).toContain(`usage: ${command.usage}`);
      }),
      fuzzRuns(15),
    );
  });
});
