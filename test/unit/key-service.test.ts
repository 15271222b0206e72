import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashApiKey, issueApiKey, KEY_CACHE_TTL_MS, KeyService, KeysUnavailableError } from '../../api/keys.ts';
import type { FileEventLog } from '../../infra/log/file/file-log.ts';
import { appendEvent } from '../../projections/control-events.ts';
import { TOPICS } from '../../schemas/catalogue.ts';
import type { Codec } from '../../schemas/codec.ts';
import type { ApiKeyEvent, TeamEvent } from '../../schemas/records.ts';
import { openEmbedded } from '../helpers/runtime-fixture.ts';

/** The API's keys, read from control.keys and control.teams on a real file log, on an injected clock. */

let dir: string;
let log: FileEventLog;
let codec: Codec;
let now = 0;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tqa-keys-'));
  ({ log, codec } = await openEmbedded(dir));
  now = Date.parse('2026-01-01T00:00:00Z');
});

afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

/** A log whose reads are counted. */
function counted(): { log: FileEventLog; reads: () => number } {
  let reads = 0;
  const read: FileEventLog['read'] = (...args) => {
    reads++;
    return log.read(...args);
  };
  return { log: Object.create(log, { read: { value: read } }) as FileEventLog, reads: () => reads };
}

describe('KeyService', () => {
  it('finds a key appended after its last read at once, with its team named, and nothing for a hash never appended', async () => {
    const keys = new KeyService({ log, codec, now: () => now });
    expect(await keys.findByHash(hashApiKey('svc_live_nobody'))).toBeNull();
    const team: TeamEvent = { teamId: 'team_0123456789', name: 'Desk', ts: now };
    await appendEvent(log, codec, TOPICS.teams.name, team.teamId, team);
    const { id, key } = await issueApiKey(log, codec, { name: 'new', plan: 'pro', scopes: ['keys:read'], teamId: 'team_0123456789' }, now);
    // The clock has not moved: the hash is not held, so the miss reads the log on.
    expect(await keys.findByHash(hashApiKey(key))).toEqual({
      id,
      name: 'new',
      plan: 'pro',
      scopes: ['keys:read'],
      createdAt: now,
      revokedAt: null,
      team: { id: 'team_0123456789', name: 'Desk' },
    });
  });

  it('holds a found key until the bound has passed, then shows its revoke', async () => {
    const keys = new KeyService({ log, codec, now: () => now });
    const { id, key } = await issueApiKey(log, codec, { name: 'doomed', plan: 'free', scopes: [], teamId: null }, now);
    const hash = hashApiKey(key);
    const found = await keys.findByHash(hash);
    const revoke: ApiKeyEvent = { keyId: id, action: 'revoke', name: 'doomed', plan: 'free', scopes: [], keyHash: hash, createdAt: found!.createdAt, teamId: null, ts: now + 10 };
    await appendEvent(log, codec, TOPICS.keys.name, id, revoke);
    now += KEY_CACHE_TTL_MS - 1;
    expect((await keys.findByHash(hash))?.revokedAt).toBeNull();
    now += 1;
    expect((await keys.findByHash(hash))?.revokedAt).toBe(now - KEY_CACHE_TTL_MS + 10);
  });

  it('lets the misses that come together share one read of the log', async () => {
    const { log: countedLog, reads } = counted();
    const keys = new KeyService({ log: countedLog, codec, now: () => now });
    await keys.findByHash(hashApiKey('svc_live_warm'));
    const before = reads();
    const made = await Promise.all([1, 2, 3].map((i) => issueApiKey(log, codec, { name: `k${i}`, plan: 'pro', scopes: [], teamId: null }, now)));
    const found = await Promise.all(made.flatMap(({ key }) => [key, key].map((k) => keys.findByHash(hashApiKey(k)))));
    expect(found.map((k) => k?.name)).toEqual(['k1', 'k1', 'k2', 'k2', 'k3', 'k3']);
    // One pass for all six misses: control.teams read once (nothing new), control.keys twice (the three keys, then its end).
    expect(reads() - before).toBe(1 + 2);
  });

  it('says the keys are unavailable while the log cannot be read, and finds them once it can', async () => {
    let down = true;
    const read: FileEventLog['read'] = (...args) => (down ? Promise.reject(new Error('disk gone')) : log.read(...args));
    const flaky = Object.create(log, { read: { value: read } }) as FileEventLog;
    const keys = new KeyService({ log: flaky, codec, now: () => now });
    const { key } = await issueApiKey(log, codec, { name: 'later', plan: 'team', scopes: [], teamId: null }, now);
    await expect(keys.findByHash(hashApiKey(key))).rejects.toBeInstanceOf(KeysUnavailableError);
    down = false;
    expect((await keys.findByHash(hashApiKey(key)))?.name).toBe('later');
  });
});
