import { ConfigError, loadConfig } from '../infra/config.ts';
import { createLogger, type Logger } from '../infra/logging.ts';
import type { CliCommand } from './command.ts';
import { UsageError } from '../projections/usage-error.ts';
import { backtestCommand } from './commands/backtest.ts';
import { cohortsCommand } from './commands/cohorts.ts';
import { dumpCommand } from './commands/dump.ts';
import { exportCommand } from './commands/export.ts';
import { ingestCommand } from './commands/ingest.ts';
import { keysCommand } from './commands/keys.ts';
import { peersCommand } from './commands/peers.ts';
import { replayCommand } from './commands/replay.ts';
import { simCommand } from './commands/sim.ts';
import { startCommand } from './commands/start.ts';
import { streamCommand } from './commands/stream.ts';
import { teamsCommand } from './commands/teams.ts';
import { topicsCommand } from './commands/topics.ts';
import { topologyCommand } from './commands/topology.ts';

export const COMMANDS: CliCommand[] = [startCommand, simCommand, ingestCommand, cohortsCommand, keysCommand, teamsCommand, streamCommand, topicsCommand, topologyCommand, dumpCommand, replayCommand, backtestCommand, exportCommand, peersCommand];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'tqa: token quant analytics service and operator tools',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Configuration comes from environment variables; see docs/operations.md.',
  ].join('\n');
}

/** What main runs against: the process's by default; tests give their own streams, environment and logger. */
export interface CliProcess {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  createLogger: (level: string) => Logger;
}

const PROCESS: CliProcess = { env: process.env, stdout: process.stdout, stderr: process.stderr, createLogger };

/** Runs one tqa command line; returns the exit code. */
export async function main(argv: string[], proc: CliProcess = PROCESS): Promise<number> {
  const [name, ...args] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    proc.stderr.write(help() + '\n');
    return name === undefined || name === 'help' || name === '--help' ? 0 : 2;
  }
  let config;
  try {
    config = loadConfig(proc.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    proc.stderr.write(`${err.message}\n`);
    return 78; // EX_CONFIG
  }
  const logger = proc.createLogger(config.LOG_LEVEL).child({ command: command.name });
  try {
    return await command.run(args, { config, logger, stdout: proc.stdout, stderr: proc.stderr });
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      proc.stderr.write(`${(err as Error).message}\nusage: ${command.usage}\n`);
      return 2;
    }
    logger.fatal({ err }, 'command failed');
    return 1;
  }
}
