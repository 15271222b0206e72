import { createHash, randomBytes } from 'node:crypto';
import { appendEvent, ControlTail, parseOrUsage } from '../projections/control-events.ts';
import type { AppendResult, EventLog } from '../infra/log/port.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { Codec } from '../schemas/codec.ts';
import { ApiKeyEventSchema, TeamEventSchema, type ApiKeyEvent, type PlanName } from '../schemas/records.ts';

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
 * the API finds it as soon as this returns (KeyService). Returns the key: it is shown once,
 * only its hash is stored.
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
  /** The team whose shared cohorts the key sees; the name is null when no event of the team was read. */
  team: { id: string; name: string | null } | null;
}

/** How long keys are served from memory unread: the bound on how late a revoke or re-plan takes effect. */
export const KEY_CACHE_TTL_MS = 1_000;

export interface KeyServiceOptions {
  log: EventLog;
  codec: Codec;
  now?: () => number;
  ttlMs?: number;
}

/** The log could not be read, so no key can be checked (the API answers 503 UPSTREAM_UNAVAILABLE). */
export class KeysUnavailableError extends Error {
  override name = 'KeysUnavailableError';
}

/**
 * Every key, held in memory and kept current from the log itself: control.keys (each event
 * carries the whole key; the latest is the key) and control.teams (for team names), read
 * onward from where the last read ended. Not from the api_keys projection: a key check then
 * never waits for the store, nor behind a catch-up's backlog (a projection minutes behind
 * would apply a new key or a revoke minutes late), and a hit is a map lookup.
 *
 * The log is read again once `ttlMs` has passed (begun in the background after half of it),
 * so a revoke or re-plan takes effect at most `ttlMs` after it was appended; a hash not held
 * is looked for in a read begun after the request came, so a new key works as soon as its
 * append returned. One read runs at a time, and the requests that come meanwhile share the next.
 */
export class KeyService {
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly keyEvents: ControlTail<typeof ApiKeyEventSchema>;
  private readonly teamEvents: ControlTail<typeof TeamEventSchema>;
  /** The latest event of each key by its hash. */
  private readonly byHash = new Map<string, ApiKeyEvent>();
  private readonly teamNames = new Map<string, string>();
  /** When the last successful read began: everything appended before then is held. */
  private readAt = -Infinity;
  /** The reads, one after another. */
  private reads: Promise<void> = Promise.resolve();
  /** The read queued and not yet begun, which callers join. */
  private queued: Promise<void> | null = null;

  constructor({ log, codec, now = Date.now, ttlMs = KEY_CACHE_TTL_MS }: KeyServiceOptions) {
    this.now = now;
    this.ttlMs = ttlMs;
    this.keyEvents = new ControlTail(log, codec, TOPICS.keys.name, ApiKeyEventSchema);
    this.teamEvents = new ControlTail(log, codec, TOPICS.teams.name, TeamEventSchema);
  }

  /** The key with this hash, revoked ones included; null when none has it. Throws KeysUnavailableError when the log cannot be read. */
  async findByHash(hash: string): Promise<ApiKey | null> {
    const age = this.now() - this.readAt;
    if (age >= this.ttlMs || !this.byHash.has(hash)) await this.readOnward();
    else if (age >= this.ttlMs / 2) this.readOnward().catch(() => undefined);
    const event = this.byHash.get(hash);
    return event === undefined ? null : this.toApiKey(event);
  }

  /** A read of what was appended since the last one, begun after this call. */
  private readOnward(): Promise<void> {
    if (this.queued) return this.queued;
    const read: Promise<void> = this.reads
      .catch(() => undefined)
      .then(() => {
        if (this.queued === read) this.queued = null;
        return this.read();
      });
    this.queued = read;
    this.reads = read;
    return read;
  }

  private async read(): Promise<void> {
    const at = this.now();
    try {
      // Teams first: a key read in this pass finds its team's name.
      for (const team of await this.teamEvents.next()) this.teamNames.set(team.teamId, team.name);
      for (const key of await this.keyEvents.next()) this.byHash.set(key.keyHash, key);
    } catch (err) {
      throw new KeysUnavailableError('the keys could not be read from the log', { cause: err });
    }
    this.readAt = at;
  }

  private toApiKey(event: ApiKeyEvent): ApiKey {
    return {
      id: event.keyId,
      name: event.name,
      plan: event.plan,
      scopes: event.scopes,
      createdAt: event.createdAt,
      revokedAt: event.action === 'revoke' ? event.ts : null,
      team: event.teamId === null ? null : { id: event.teamId, name: this.teamNames.get(event.teamId) ?? null },
    };
  }
}
