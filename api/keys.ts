import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { AnalyticalStore } from '../infra/store/port.ts';
import { column, columns, list, sql, table } from '../infra/store/sql-literal.ts';
import type { ProjectionTables } from '../projections/tables.ts';
import { apiKeys, teams, type ApiKeyRow, type TeamRow } from '../projections/tables/keys.ts';
import { appendEvent, parseOrUsage } from '../projections/control-events.ts';
import type { AppendResult, EventLog } from '../infra/log/port.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { Codec } from '../schemas/codec.ts';
import { ApiKeyEventSchema, PLAN_NAMES, type ApiKeyEvent, type PlanName } from '../schemas/records.ts';
import { RefreshedLookup } from './services/refreshed-lookup.ts';

/** Live keys: the fixed prefix and 32 random bytes in base64url (43 characters). */
export const API_KEY_PREFIX = 'svc_live_';
const API_KEY_FORMAT = /^svc_live_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function newKeyId(): string {
  return `key_${randomBytes(12).toString('hex')}`;
}

export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_FORMAT.test(value);
}

/** Keys are stored and looked up by this digest only; the key itself is shown once, at creation. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * Creates a key through its control event on control.keys, the one `tqa keys create` appends;
 * the api_keys projection applies it within seconds. Returns the key: it is shown once, only
 * its hash is stored.
 */
export async function issueApiKey(
  log: EventLog,
  codec: Codec,
  grant: Pick<ApiKeyEvent, 'name' | 'plan' | 'scopes' | 'teamId'>,
  at = Date.now(),
): Promise<{ id: string; key: string; at: AppendResult }> {
  const key = generateApiKey();
  const event = parseOrUsage(ApiKeyEventSchema, { ...grant, keyId: newKeyId(), action: 'create', keyHash: hashApiKey(key), createdAt: at, ts: at });
  return { id: event.keyId, key, at: await appendEvent(log, codec, TOPICS.keys.name, event.keyId, event) };
}

/** A key as the API sees it. */
export interface ApiKey {
  id: string;
  name: string;
  plan: PlanName;
  /** As granted; unknown names (from a newer release) are kept and simply match no endpoint. */
  scopes: string[];
  createdAt: number;
  revokedAt: number | null;
  /** The team whose shared cohorts the key sees; the name is null until the team's event is applied. */
  team: { id: string; name: string | null } | null;
}

const Scopes = z.array(z.string());
const Plan = z.enum(PLAN_NAMES);

/** How long a found key is served from memory: the bound on how late a revoke takes effect. */
export const KEY_CACHE_TTL_MS = 1_000;
const KEY_CACHE_MAX = 10_000;

export interface KeyServiceOptions {
  store: AnalyticalStore<ProjectionTables>;
  now?: () => number;
  ttlMs?: number;
}

/**
 * Looks keys up by hash in the api_keys projection. Found keys (revoked ones included) are
 * kept in memory and all read again together once `ttlMs` has passed, so a revoke takes
 * effect at most `ttlMs` after the projection applied it. Unknown hashes are not cached, so
 * a new key works as soon as its event is applied.
 */
export class KeyService {
  private readonly store: AnalyticalStore<ProjectionTables>;
  private readonly keys: RefreshedLookup<ApiKey>;

  constructor({ store, now = Date.now, ttlMs = KEY_CACHE_TTL_MS }: KeyServiceOptions) {
    this.store = store;
    this.keys = new RefreshedLookup({ read: (hashes) => this.read(hashes), now, ttlMs, max: KEY_CACHE_MAX });
  }

  async findByHash(hash: string): Promise<ApiKey | null> {
    return (await this.keys.get([hash])).get(hash) ?? null;
  }

  private async read(hashes: readonly string[]): Promise<Map<string, ApiKey>> {
    const found = new Map<string, ApiKey>();
    if (hashes.length === 0) return found;
    const rows = await this.store.query<ApiKeyRow>(
      sql`SELECT ${columns(apiKeys)} FROM ${table(apiKeys)} WHERE ${column(apiKeys, 'hash')} IN ${list(hashes)}`,
    );
    const teamIds = [...new Set(rows.flatMap((r) => (r.team_id === null ? [] : [r.team_id])))];
    const names = teamIds.length === 0 ? new Map<string, string>() : await teamNames(this.store, teamIds);
    for (const row of rows) {
      const key = toApiKey(row);
      if (row.team_id !== null) key.team = { id: row.team_id, name: names.get(row.team_id) ?? null };
      found.set(row.hash, key);
    }
    return found;
  }
}

async function teamNames(store: AnalyticalStore<ProjectionTables>, teamIds: readonly string[]): Promise<Map<string, string>> {
  const rows = await store.query<Pick<TeamRow, 'team_id' | 'name'>>(
    sql`SELECT ${column(teams, 'team_id')}, ${column(teams, 'name')} FROM ${table(teams)} WHERE ${column(teams, 'team_id')} IN ${list(teamIds)}`,
  );
  return new Map(rows.map((r) => [r.team_id, r.name]));
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.key_id,
    name: row.name,
    plan: Plan.parse(row.plan),
    scopes: Scopes.parse(JSON.parse(row.scopes)),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    team: null,
  };
}
