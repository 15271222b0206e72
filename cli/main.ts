import { ConfigError, loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
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

export async function main(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(help() + '\n');
    process.exitCode = name === undefined || name === 'help' || name === '--help' ? 0 : 2;
    return;
  }
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 78; // EX_CONFIG
    return;
  }
  const logger = createLogger(config.LOG_LEVEL).child({ command: command.name });
  try {
    process.exitCode = await command.run(args, { config, logger, stdout: process.stdout, stderr: process.stderr });
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`${(err as Error).message}\nusage: ${command.usage}\n`);
      process.exitCode = 2;
      return;
    }
    logger.fatal({ err }, 'command failed');
    process.exitCode = 1;
  }
}
