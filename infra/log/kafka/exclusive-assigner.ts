import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';
import { letFollowersSyncFirst } from './leader-syncs-last.ts';

const NAME = 'TqaExclusiveAssigner';
const VERSION = 1;
const HOLDER = Buffer.from('holder');

/**
 * A partition assigner that gives every partition of the group's topics to one member; the
 * others hold nothing and wait as standbys (for a processor whose single task reads every
 * partition in one event-time order, which two members splitting the partitions would break).
 * The member that holds the partitions keeps them over a re-balance (a standby joining does
 * not move them); otherwise the first member by id takes them.
 *
 * `holds` tells whether this member currently holds partitions; it travels in the member's
 * metadata so the group leader, whichever member that is, can keep the holder in place.
 */
export function exclusiveAssigner(holds: () => boolean): PartitionAssigner {
  return ({ cluster }) => ({
    name: NAME,
    version: VERSION,
    async assign({ members, topics }) {
      await letFollowersSyncFirst(members.length);
      const holder = members
        .filter((m) => AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.userData.equals(HOLDER))
        .map((m) => m.memberId)
        .sort()[0];
      const chosen = holder ?? members.map((m) => m.memberId).sort()[0];
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
      return {
        name: NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: VERSION, topics, userData: holds() ? HOLDER : Buffer.alloc(0) }),
      };
    },
  });
}
