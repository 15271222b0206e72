import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Config } from '../infra/config.ts';

/**
 * Signing secrets at rest: a webhook must be signed with its secret, so it cannot be kept
 * as a hash; it is sealed with AES-256-GCM under the service key, bound to its webhook id
 * (additional data), so a sealed secret copied onto another webhook does not open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the service key must be 32 bytes');
  }

  /** `v1.<base64url of iv | tag | ciphertext>`. */
  seal(secret: string, webhookId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(webhookId));
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string, webhookId: string): string {
    if (!sealed.startsWith('v1.')) throw new Error('unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12)).setAAD(Buffer.from(webhookId));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

const KEY_FILE = 'webhooks.key';

/**
 * The service key: TQA_WEBHOOKS_KEY, or (embedded use) a key generated once into
 * `<data dir>/webhooks.key` with mode 0600. Roles on several machines must share
 * TQA_WEBHOOKS_KEY: a key generated per machine could not open the others' secrets.
 */
export async function loadSecretBox(config: Config): Promise<SecretBox> {
  if (config.TQA_WEBHOOKS_KEY !== undefined) return new SecretBox(Buffer.from(config.TQA_WEBHOOKS_KEY, 'base64'));
  const path = join(config.TQA_DATA_DIR, KEY_FILE);
  try {
    await writeFile(path, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another role of this data dir made it first; use that one.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return new SecretBox(Buffer.from((await readFile(path, 'utf8')).trim(), 'base64'));
}
