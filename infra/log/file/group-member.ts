import { hostname } from 'node:os';
import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { writeFileAtomic } from '../../fs/atomic-write.ts';
import { processAlive } from '../../fs/process-alive.ts';
import { ProcessLock } from '../../fs/process-lock.ts';
import type { GroupMember, TopicPartition } from '../port.ts';

/**
 * Who holds a consumer group of the file log, or a share of its partitions, for `tqa topics`:
 * the member that took the lock writes this beside the group's offsets, and removes it when it
 * lets go.
 */
interface MemberRecord extends GroupMember {
  pid: number;
  /** The path of the lock the member holds: the group file's, or its first partition's. */
  lock: string;
}

/**
 * Beside `<group>.json`: `<group>.member` for the member holding the whole group,
 * `<group>.json#p<n>.member` for one holding a share from partition n on. Not `.json` files,
 * so listGroups does not take them for groups.
 */
function memberFile(lock: string): string {
  return lock.endsWith('.json') ? lock.replace(/\.json$/, '.member') : `${lock}.member`;
}

function isMemberFileOf(groupFile: string, name: string): boolean {
  return name === basename(memberFile(groupFile)) || (name.startsWith(`${basename(groupFile)}#`) && name.endsWith('.member'));
}

/** This thread as a member: host, process and (off the main thread) thread. */
function thisMember(): string {
  return `${hostname()} pid ${process.pid}${threadId === 0 ? '' : ` thread ${threadId}`}`;
}

/** `lock`: the path of the lock the member holds (the group file's, or a partition's). */
export async function recordMember(lock: string, partitions: TopicPartition[]): Promise<void> {
  const record: MemberRecord = { member: thisMember(), pid: process.pid, lock, partitions };
  await writeFileAtomic(memberFile(lock), JSON.stringify(record), { durable: false });
}

export async function forgetMember(lock: string): Promise<void> {
  await rm(memberFile(lock), { force: true });
}

/**
 * The group's members that hold their locks now. A member killed with -9 leaves its file
 * behind but not the lock; and a file whose process is gone is the dead member's, in the
 * moment before the next holder writes its own.
 */
export async function readMembers(groupFile: string): Promise<GroupMember[]> {
  const names = (await readdir(dirname(groupFile))).filter((name) => isMemberFileOf(groupFile, name));
  const members: GroupMember[] = [];
  for (const name of names) {
    let record: MemberRecord;
    try {
      record = JSON.parse(await readFile(join(dirname(groupFile), name), 'utf8')) as MemberRecord;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // let go meanwhile
      throw err;
    }
    if (!processAlive(record.pid) || !(await new ProcessLock(record.lock).isHeld())) continue;
    members.push({ member: record.member, partitions: record.partitions });
  }
  return members;
}
