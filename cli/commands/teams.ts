import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { openLogServices } from '../../infra/bootstrap.ts';
import type { EventLog } from '../../infra/log/port.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { TeamEventSchema, type TeamEvent } from '../../schemas/records.ts';
import type { CliCommand } from '../command.ts';
import { UsageError } from '../../projections/usage-error.ts';
import { appendEvent, parseOrUsage, readControlEvents } from '../../projections/control-events.ts';

const TOPIC = TOPICS.teams.name;

/**
 * Teams group API keys (`tqa keys create --team`) that share manual cohorts. A team is a
 * creation event on control.teams; `create` returns once it is appended, and keys can join the
 * team from then on (the API names a key's team from the log itself, as it reads the keys).
 */
export const teamsCommand: CliCommand = {
  name: 'teams',
  summary: 'create or list teams of API keys',
  usage: 'tqa teams create --name NAME [--json]\n       tqa teams list [--json]',
  async run(args, { config, logger, stdout }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { name: { type: 'string' }, json: { type: 'boolean', default: false } },
    });
    const [action] = positionals;
    if (action !== 'create' && action !== 'list') throw new UsageError(`unknown action ${action ?? ''}`);
    if (action === 'create' && !values.name) throw new UsageError('--name NAME is required');
    const { log, codec, close } = await openLogServices(config, logger);
    try {
      if (action === 'list') {
        const rows = [...(await currentTeams(log, codec)).values()].map((t) => ({ id: t.teamId, name: t.name, created_at: new Date(t.ts).toISOString() }));
        if (values.json) stdout.write(JSON.stringify(rows) + '\n');
        else for (const r of rows) stdout.write(`${r.id}  ${r.created_at}  ${r.name}\n`);
        return 0;
      }
      const event = parseOrUsage(TeamEventSchema, { teamId: `team_${randomBytes(12).toString('hex')}`, name: values.name, ts: Date.now() });
      await appendEvent(log, codec, TOPIC, event.teamId, event);
      stdout.write(values.json ? JSON.stringify({ id: event.teamId, name: event.name }) + '\n' : `${event.teamId}\n`);
      return 0;
    } finally {
      await close();
    }
  },
};

/** Every team created so far, from the log itself. */
export async function currentTeams(log: EventLog, codec: Codec): Promise<Map<string, TeamEvent>> {
  return new Map((await readControlEvents(log, codec, TOPIC, TeamEventSchema)).map((e) => [e.teamId, e]));
}
