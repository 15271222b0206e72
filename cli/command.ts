import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/logging.ts';

/** What every CLI command gets: the validated config, a logger and its output streams. */
export interface CliContext {
  config: Config;
  logger: Logger;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  /** Returns the process exit code. */
  run(args: string[], ctx: CliContext): Promise<number>;
}
