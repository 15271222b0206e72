import { expect } from 'vitest';
import type { CliCommand } from '../../cli/command.ts';
import type { Config } from '../../infra/config.ts';
import { silentLogger } from './runtime-fixture.ts';
import { sink } from './sink.ts';

/** Runs a tqa command as the CLI would, requires exit code 0 (its stderr in the message) and returns its stdout. */
export async function runCommand(command: CliCommand, config: Config, args: string[]): Promise<string> {
  const out = sink();
  const err = sink();
  const code = await command.run(args, { config, logger: silentLogger, stdout: out.stream, stderr: err.stream });
  expect(code, err.text()).toBe(0);
  return out.text();
}
