import { hostname } from 'node:os';
import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';
import { letFollowersSyncFirst } from './leader-syncs-last.ts';

const NAME = 'TqaExclusiveAssigner';
const VERSION = 2;

/** What a member tells the group leader about itself, in its metadata's user data. */
interface MemberInfo {
  /** The process the member runs in: its members in every group share it. */
  process: string;
  /** Whether the member holds the group's partitions now. */
  holds: boolean;
}

/** This process, as the members of its groups name it: unique among the processes of a cluster while it runs. */
const THIS_PROCESS = `${hostname()}/${process.pid}`;

export interface ExclusiveOptions {
  /** Whether this member holds the group's partitions now. */
  holds: () => boolean;
  /** Which of the processes holds the group (see exclusiveAssigner). */
  slot: number;
  /** The name of this member's process; default this one's host and pid. */
  process?: string;
}

function decodeInfo(metadata: Buffer): MemberInfo {
  try {
    const info = JSON.parse(AssignerProtocol.MemberMetadata.decode(metadata)?.userData.toString() ?? '') as Partial<MemberInfo>;
    return { process: String(info.process ?? ''), holds: info.holds === true };
  } catch {
    // A member of an earlier version, whose user data is not JSON: it names no process.
    return { process: '', holds: false };
  }
}

/**
 * A partition assigner that gives every partition of the group's topics to one member; the
 * others hold nothing and wait as standbys (for a processor whose single task reads every
 * partition in one event-time order, which two members splitting the partitions would break).
 *
 * Which member: the processes of the group's members sorted by name, the `slot`-th of them
 * (modulo their count). Every group of a process names it the same way, so groups given
 * different slots (each single-task processor its own) spread over the processes there are,
 * rather than all landing on whichever joined first; each group is placed by its own leader
 * without knowing the others. A process that joins or leaves moves the groups whose slot now
 * falls elsewhere, and only those. Within the chosen process (normally one member) the member
 * holding the partitions keeps them, else the first by id.
 */
export function exclusiveAssigner({ holds, slot, process: member = THIS_PROCESS }: ExclusiveOptions): PartitionAssigner {
  return ({ cluster }) => ({
    name: NAME,
    version: VERSION,
    async assign({ members, topics }) {
      await letFollowersSyncFirst(members.length);
      const infos = members.map((m) => ({ memberId: m.memberId, ...decodeInfo(m.memberMetadata) }));
      const processes = [...new Set(infos.map((i) => i.process))].sort();
      const holder = processes[slot % processes.length];
      const candidates = infos.filter((i) => i.process === holder);
      const chosen = (candidates.find((i) => i.holds) ?? candidates.sort((a, b) => (a.memberId < b.memberId ? -1 : 1))[0]).memberId;
      const everything = Object.fromEntries(
        topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId).sort((a, b) => a - b)]),
      );
      return members.map(({ memberId }) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: VERSION,
          assignment: memberId === chosen ? everything : {},
          userData: Buffer.alloc(0),
        }),
      }));
    },
    protocol({ topics }) {
      const info: MemberInfo = { process: member, holds: holds() };
      return {
        name: NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: VERSION, topics, userData: Buffer.from(JSON.stringify(info)) }),
      };
    },
  });
}
