import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileEventLog } from '../../infra/log/file/file-log.ts';
import type { AppendResult, LogConsumer } from '../../infra/log/port.ts';
import { waitFor } from '../../infra/wait.ts';
import { applied } from '../../projections/control-events.ts';

/** A control command's wait for its change (projections/control-events.ts), against the file log's groups. */
describe('waiting for a control change to be applied', () => {
  const topic = 'control.test';
  const groupId = 'projection.test';
  let dir: string;
  let log: FileEventLog;
  let at: AppendResult;
  let member: LogConsumer | undefined;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tqa-control-apply-'));
    log = await FileEventLog.open({ dir, fsync: 'never', segmentBytes: 64 * 1024, logger: pino({ level: 'silent' }) });
    await log.ensureTopics([{ name: topic, partitions: 1, cleanupPolicy: 'delete', retentionMs: -1, retentionBytes: -1 }]);
    [at] = await log.append(topic, [{ key: 'k', value: Buffer.from('change') }]);
  });
  afterEach(async () => {
    await member?.stop();
    member = undefined;
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives up at the deadline when no member of the group runs', async () => {
    let busy = false;
    expect(await applied(log, groupId, topic, at, Date.now() + 50, () => (busy = true))).toBe(false);
    expect(busy).toBe(false);
  });

  it('waits past the deadline while a member runs without having applied it, and says so once', async () => {
    member = log.consumer({ groupId, topics: [topic], fromBeginning: true, autoCommit: false });
    let read = false;
    void member.run(async () => {
      read = true;
    });
    await waitFor(() => read, 'the member to read the change');
    let busyNotes = 0;
    const waiting = applied(log, groupId, topic, at, Date.now() + 50, () => busyNotes++);
    await waitFor(() => busyNotes === 1, 'the wait to find the member busy');
    // The member applies the change only now, well past the first deadline.
    await member.commit([{ topic, partition: at.partition, offset: at.offset + 1 }]);
    expect(await waiting).toBe(true);
    expect(busyNotes).toBe(1);
  });
});
