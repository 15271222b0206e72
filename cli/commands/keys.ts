import { parseArgs } from 'node:util';
import { issueApiKey } from '../../api/keys.ts';
import { isScope, SCOPE_NAMES } from '../../api/scopes.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import { ApiKeyEventSchema, PLAN_NAMES, type ApiKeyEvent } from '../../schemas/records.ts';
import { openLogServices } from '../../infra/bootstrap.ts';
import type { EventLog } from '../../infra/log/port.ts';
import type { CliCommand } from '../command.ts';
import { appendEvent, parseOrUsage } from '../control-events.ts';
import { UsageError } from '../command.ts';

const USAGE = [
  `tqa keys create --name NAME --plan ${PLAN_NAMES.join('|')} [--scopes a,b] [--json]   (default: every scope)`,
  'tqa keys revoke KEY_ID [--json]',
  'tqa keys list [--json]',
].join('\n       ');

const TOPIC = TOPICS.keys.name;

/**
 * Keys change only through events on control.keys, which the api-keys projection applies
 * (also in a running service); the key is printed once and only its hash is stored.
 * `list` and `revoke` read the log itself, so they work without the store.
 */
export const keysCommand: CliCommand = {
  name: 'keys',
  summary: 'create, revoke or list API keys',
  usage: USAGE,
  async run(args, { config, logger, stdout }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        scopes: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const [action, target] = positionals;
    if (action !== 'create' && action !== 'revoke' && action !== 'list') throw new UsageError(`unknown action ${action ?? ''}`);
    const create = action === 'create' ? parseCreate(values) : null;
    if (action === 'revoke' && !target) throw new UsageError('name the key: key_<hex>');
    const { log, codec, close } = await openLogServices(config, logger);
    try {
      if (create) {
        const { id, key } = await issueApiKey(log, codec, create);
        stdout.write(values.json ? JSON.stringify({ id, key }) + '\n' : `${id}\n${key}\n(shown once: store it now)\n`);
        return 0;
      }
      const keys = await currentKeys(log, codec);
      if (action === 'list') {
        const rows = [...keys.values()].map((k) => ({
          id: k.keyId,
          name: k.name,
          plan: k.plan,
          scopes: k.scopes,
          created_at: new Date(k.createdAt).toISOString(),
          revoked_at: k.action === 'revoke' ? new Date(k.ts).toISOString() : null,
        }));
        if (values.json) stdout.write(JSON.stringify(rows) + '\n');
        else for (const r of rows) stdout.write(`${r.id}  ${r.plan}  ${r.revoked_at ? 'revoked' : 'active'}  ${r.name}  ${r.scopes.join(',')}\n`);
        return 0;
      }
      const current = keys.get(target!);
      if (!current) throw new UsageError(`no key ${target}`);
      if (current.action === 'revoke') throw new UsageError(`${target} is already revoked`);
      // The revoke carries the whole key so the projection stays a function of one event.
      const event = parseOrUsage(ApiKeyEventSchema, { ...current, action: 'revoke', ts: Math.max(Date.now(), current.ts) });
      await appendEvent(log, codec, TOPIC, event.keyId, event);
      stdout.write(values.json ? JSON.stringify({ id: event.keyId, revoked: true }) + '\n' : `revoked ${event.keyId}\n`);
      return 0;
    } finally {
      await close();
    }
  },
};

function parseCreate(values: { name?: string; plan?: string; scopes?: string }): Pick<ApiKeyEvent, 'name' | 'plan' | 'scopes'> {
  if (!values.name) throw new UsageError('--name NAME is required');
  const plan = PLAN_NAMES.find((p) => p === values.plan);
  if (!plan) throw new UsageError(`--plan must be one of ${PLAN_NAMES.join(', ')}`);
  const scopes = values.scopes === undefined ? SCOPE_NAMES : values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPE_NAMES.join(', ')}`);
  return { name: values.name, plan, scopes: [...new Set(scopes)] };
}

/** The latest event of every key, in log order (the topic has one partition). */
async function currentKeys(log: EventLog, codec: Codec): Promise<Map<string, ApiKeyEvent>> {
  const keys = new Map<string, ApiKeyEvent>();
  for (const { partition, offset } of await log.startOffsets(TOPIC)) {
    for (let from = offset; ; ) {
      const batch = await log.read(TOPIC, partition, from, 1_000);
      if (batch.length === 0) break;
      for (const record of batch) {
        if (record.value === null) continue;
        const parsed = ApiKeyEventSchema.safeParse(await codec.decode(TOPIC, record.value));
        if (parsed.success) keys.set(parsed.data.keyId, parsed.data);
      }
      from = batch.at(-1)!.offset + 1;
    }
  }
  return keys;
}
