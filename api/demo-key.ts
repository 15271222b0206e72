import { join } from 'node:path';
import type { EventLog } from '../infra/log/port.ts';
import type { Logger } from '../infra/logging.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import type { Codec } from '../schemas/codec.ts';
import { issueApiKey } from './keys.ts';
import { SCOPE_NAMES } from './scopes.ts';
import { createFileAtomic } from '../infra/fs/atomic-write.ts';
import { exists } from '../infra/fs/exists.ts';

/** Where the demo key is kept, under the data dir. */
export const DEMO_KEY_FILE = 'demo-key';

export interface DemoKeyOptions {
  log: EventLog;
  codec: Codec;
  dataDir: string;
  stdout: NodeJS.WritableStream;
  logger: Logger;
}

/**
 * On the first start of a fresh service, a key to try the API with: Team plan, every scope,
 * printed once on stdout and kept in `<data dir>/demo-key` (mode 0600). A fresh service is
 * one without that file and without any key event in the log, so deleting the file, or a
 * key made with the CLI before the first start, never brings a new demo key.
 */
export async function ensureDemoKey({ log, codec, dataDir, stdout, logger }: DemoKeyOptions): Promise<void> {
  const file = join(dataDir, DEMO_KEY_FILE);
  if (await exists(file)) return;
  const ends = await log.endOffsets(TOPICS.keys.name);
  if (ends.some((p) => p.offset > 0)) return;
  const { id, key } = await issueApiKey(log, codec, { name: 'demo key', plan: 'team', scopes: SCOPE_NAMES, teamId: null });
  try {
    // Whole at once, and never over a key file another process wrote meanwhile.
    await createFileAtomic(file, `${key}\n`, { mode: 0o600 });
  } finally {
    // Once the file holds the key, so a reader who saw the line finds it there; printed even if
    // the file could not be written, so the key is known either way.
    stdout.write(`demo API key: ${key}\n`);
  }
  logger.info({ keyId: id, file }, 'demo API key created (Team plan, every scope); it is also in the file');
}
