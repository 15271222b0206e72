import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { TOPICS } from '../../schemas/catalogue.ts';
import { ApiKeyEventSchema, COHORT_ACTIONS, CohortCommandSchema, type CohortCommand } from '../../schemas/records.ts';
import { openLogServices } from '../../infra/bootstrap.ts';
import type { CliCommand } from '../command.ts';
import { appendEvent, parseOrUsage, readControlEvents } from '../../projections/control-events.ts';
import { UsageError } from '../../projections/usage-error.ts';

const USAGE = [
  'tqa cohorts create --name NAME --owner KEY_ID [--members @a,@b] [--team TEAM_ID] [--json]   (--team: the owner\'s team)',
  'tqa cohorts set_members COHORT_ID --owner KEY_ID --members @a,@b',
  'tqa cohorts share COHORT_ID --owner KEY_ID [--team TEAM]   (no --team: stop sharing)',
  'tqa cohorts delete COHORT_ID --owner KEY_ID',
].join('\n       ');

/**
 * Manual cohorts are changed only through commands on control.cohorts, which the quant
 * engine applies in event-time order (a refused one is dead-lettered with its reason);
 * a replay rebuilds every cohort from them.
 */
export const cohortsCommand: CliCommand = {
  name: 'cohorts',
  summary: 'create, change, share or delete a manual cohort',
  usage: USAGE,
  async run(args, { config, logger, stdout }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        owner: { type: 'string' },
        members: { type: 'string' },
        team: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const [action, target] = positionals;
    if (!COHORT_ACTIONS.includes(action as CohortCommand['action'])) throw new UsageError(`unknown action ${action ?? ''}`);
    if (!values.owner) throw new UsageError('--owner KEY_ID is required');
    const cohortId = action === 'create' ? `cohort_${randomBytes(8).toString('hex')}` : target;
    if (!cohortId) throw new UsageError('name the cohort: cohort_<id>');
    const command = parseOrUsage(CohortCommandSchema, {
      commandId: `cmd_${randomBytes(12).toString('hex')}`,
      action,
      cohortId,
      name: values.name ?? null,
      ownerKeyId: values.owner,
      teamId: values.team ?? null,
      members: values.members ? values.members.split(',').map((m) => m.trim()).filter(Boolean) : [],
      ts: Date.now(),
    });
    const { log, codec, close } = await openLogServices(config, logger);
    try {
      if (command.teamId !== null) {
        // A cohort is shared only with its owner's own team: nothing crosses teams.
        const owner = (await readControlEvents(log, codec, TOPICS.keys.name, ApiKeyEventSchema)).filter((k) => k.keyId === command.ownerKeyId).at(-1);
        if (!owner) throw new UsageError(`no key ${command.ownerKeyId}`);
        if (owner.teamId !== command.teamId) throw new UsageError(`${command.ownerKeyId} is not in team ${command.teamId}; a cohort is shared with its owner's team only`);
      }
      const at = await appendEvent(log, codec, TOPICS.cohortCommands.name, command.cohortId, command);
      const result = { cohort_id: command.cohortId, command_id: command.commandId, action: command.action, offset: at.offset };
      stdout.write(values.json ? JSON.stringify(result) + '\n' : `${command.action} ${command.cohortId} (command ${command.commandId})\n`);
      return 0;
    } finally {
      await close();
    }
  },
};
