import { hostname } from 'node:os';
import { readFile, rm } from 'node:fs/promises';
import { threadId } from 'node:worker_threads';
import { writeFileAtomic } from '../../fs/atomic-write.ts';
import { processAlive } from '../../fs/process-alive.ts';
import { ProcessLock } from '../../fs/process-lock.ts';
import type { GroupMember, TopicPartition } from '../port.ts';

/**
 * Who holds a consumer group of the file log, for `tqa topics`: the member that took the
 * group's lock writes this beside the group's offsets, and removes it when it lets go.
 */
interface MemberRecord extends GroupMember {
  pid: number;
}

/** Beside `<group>.json`; not a `.json` file, so listGroups does not take it for a group. */
function memberFile(groupFile: string): string {
  return groupFile.replace(/\.json$/, '.member');
}

/** This thread as a member: host, process and (off the main thread) thread. */
function thisMember(): string {
  return `${hostname()} pid ${process.pid}${threadId === 0 ? '' : ` thread ${threadId}`}`;
}

export async function recordMember(groupFile: string, partitions: TopicPartition[]): Promise<void> {
  const record: MemberRecord = { member: thisMember(), pid: process.pid, partitions };
  await writeFileAtomic(memberFile(groupFile), JSON.stringify(record), { durable: false });
}

export async function forgetMember(groupFile: string): Promise<void> {
  await rm(memberFile(groupFile), { force: true });
}

/**
 * The group's member, if one holds the group's lock now. A member killed with -9 leaves its
 * file behind but not the lock; and a file whose process is gone is the dead member's, in the
 * moment before the next holder writes its own.
 */
export async function readMember(groupFile: string): Promise<GroupMember[]> {
  if (!(await new ProcessLock(groupFile).isHeld())) return [];
  let record: MemberRecord;
  try {
    record = JSON.parse(await readFile(memberFile(groupFile), 'utf8')) as MemberRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  if (!processAlive(record.pid)) return [];
  return [{ member: record.member, partitions: record.partitions }];
}
