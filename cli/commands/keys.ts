import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { issueApiKey, KEY_CACHE_TTL_MS } from '../../api/keys.ts';
import { isScope, SCOPE_NAMES } from '../../api/scopes.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { ApiKeyEventSchema, PLAN_NAMES, TEAM_ID, type ApiKeyEvent, type PlanName } from '../../schemas/records.ts';
import { openLogServices } from '../../infra/bootstrap.ts';
import type { EventLog } from '../../infra/log/port.ts';
import { currentTeams } from './teams.ts';
import type { CliCommand } from '../command.ts';
import { appendEvent, parseOrUsage, readControlEvents } from '../../projections/control-events.ts';
import { UsageError } from '../../projections/usage-error.ts';

const USAGE = [
  `tqa keys create --name NAME --plan ${PLAN_NAMES.join('|')} [--scopes a,b] [--team TEAM_ID] [--json]   (default: every scope)`,
  'tqa keys revoke KEY_ID [--json]',
  `tqa keys set-plan KEY_ID --plan ${PLAN_NAMES.join('|')} [--scopes a,b] [--json]   (default: the key keeps its scopes)`,
  'tqa keys list [--json]',
].join('\n       ');

const TOPIC = TOPICS.keys.name;

/**
 * Keys change only through events on control.keys, which the API and the stream read from the
 * log itself (KeyService), and the api-keys projection stores; the key is printed once and only
 * its hash is stored. `create` returns once its event is appended: a key the API does not hold
 * makes it read the log, so the key works as soon as the command returns, a catch-up's backlog
 * or not. `set-plan` and `revoke` return once every API has read the log since the change (the
 * key cache's bound, KEY_CACHE_TTL_MS, after the append), so the key is re-planned or refused
 * as soon as they return. Every action reads and writes the log alone: none needs the store.
 */
export const keysCommand: CliCommand = {
  name: 'keys',
  summary: 'create, revoke, re-plan or list API keys',
  usage: USAGE,
  async run(args, { config, logger, stdout }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        scopes: { type: 'string' },
        team: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const [action, target] = positionals;
    if (action !== 'create' && action !== 'revoke' && action !== 'set-plan' && action !== 'list') throw new UsageError(`unknown action ${action ?? ''}`);
    const create = action === 'create' ? parseCreate(values) : null;
    const replan = action === 'set-plan' ? { plan: parsePlan(values.plan), scopes: values.scopes === undefined ? null : parseScopes(values.scopes) } : null;
    if ((action === 'revoke' || action === 'set-plan') && !target) throw new UsageError('name the key: key_<hex>');
    const { log, codec, close } = await openLogServices(config, logger);
    try {
      if (create) {
        if (create.teamId !== null && !(await currentTeams(log, codec)).has(create.teamId)) throw new UsageError(`no team ${create.teamId}`);
        const { id, key } = await issueApiKey(log, codec, create);
        stdout.write(values.json ? JSON.stringify({ id, key, team_id: create.teamId }) + '\n' : `${id}\n${key}\n(shown once: store it now)\n`);
        return 0;
      }
      const keys = await currentKeys(log, codec);
      if (action === 'list') {
        const rows = [...keys.values()].map((k) => ({
          id: k.keyId,
          name: k.name,
          plan: k.plan,
          scopes: k.scopes,
          team_id: k.teamId,
          created_at: new Date(k.createdAt).toISOString(),
          revoked_at: k.action === 'revoke' ? new Date(k.ts).toISOString() : null,
        }));
        if (values.json) stdout.write(JSON.stringify(rows) + '\n');
        else for (const r of rows) stdout.write(`${r.id}  ${r.plan}  ${r.revoked_at ? 'revoked' : 'active'}  ${r.team_id ?? '-'}  ${r.name}  ${r.scopes.join(',')}\n`);
        return 0;
      }
      const current = keys.get(target!);
      if (!current) throw new UsageError(`no key ${target}`);
      if (current.action === 'revoke') throw new UsageError(`${target} is already revoked`);
      const ts = Math.max(Date.now(), current.ts);
      if (replan) {
        // Like a revoke, the change carries the whole key: the projection stays a function of one event.
        const event = parseOrUsage(ApiKeyEventSchema, { ...current, action: 'set_plan', plan: replan.plan, scopes: replan.scopes ?? current.scopes, ts });
        await appendSeenByEveryApi(log, codec, event);
        stdout.write(values.json ? JSON.stringify({ id: event.keyId, plan: event.plan, scopes: event.scopes }) + '\n' : `${event.keyId} is now on ${event.plan} (${event.scopes.join(',')})\n`);
        return 0;
      }
      // The revoke carries the whole key so the projection stays a function of one event.
      const event = parseOrUsage(ApiKeyEventSchema, { ...current, action: 'revoke', ts });
      await appendSeenByEveryApi(log, codec, event);
      stdout.write(values.json ? JSON.stringify({ id: event.keyId, revoked: true }) + '\n' : `revoked ${event.keyId}\n`);
      return 0;
    } finally {
      await close();
    }
  },
};

function parseCreate(values: { name?: string; plan?: string; scopes?: string; team?: string }): Pick<ApiKeyEvent, 'name' | 'plan' | 'scopes' | 'teamId'> {
  if (!values.name) throw new UsageError('--name NAME is required');
  const plan = parsePlan(values.plan);
  const scopes = values.scopes === undefined ? [...SCOPE_NAMES] : parseScopes(values.scopes);
  if (values.team !== undefined && !TEAM_ID.test(values.team)) throw new UsageError('--team must be team_<hex>');
  return { name: values.name, plan, scopes, teamId: values.team ?? null };
}

function parsePlan(value: string | undefined): PlanName {
  const plan = PLAN_NAMES.find((p) => p === value);
  if (!plan) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
  return plan;
}

function parseScopes(value: string): string[] {
  const scopes = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPE_NAMES.join(', ')}`);
  return [...new Set(scopes)];
}

/** Appends a change of a held key and returns once every API has read the log since (the key cache's bound). */
async function appendSeenByEveryApi(log: EventLog, codec: Codec, event: ApiKeyEvent): Promise<void> {
  await appendEvent(log, codec, TOPIC, event.keyId, event);
  await delay(KEY_CACHE_TTL_MS);
}

/** The latest event of every key, in log order (the topic has one partition). */
async function currentKeys(log: EventLog, codec: Codec): Promise<Map<string, ApiKeyEvent>> {
  return new Map((await readControlEvents(log, codec, TOPIC, ApiKeyEventSchema)).map((e) => [e.keyId, e]));
}
