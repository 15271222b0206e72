import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import { describeLogContract } from './log.contract.ts';

describeLogContract('file log', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tqa-log-'));
  const open = () =>
    FileEventLog.open({ dir, fsync: 'always', segmentBytes: 4096, logger: pino({ level: 'silent' }), pollIntervalMs: 20 });
  const log = await open();
  const others: FileEventLog[] = [];
  return {
    log,
    describesGroups: true,
    reopen: async () => {
      const other = await open();
      others.push(other);
      return other;
    },
    cleanup: async () => {
      await Promise.all([log, ...others].map((l) => l.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
});
