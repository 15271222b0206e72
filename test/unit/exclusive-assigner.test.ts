import { AssignerProtocol, type Cluster, type GroupMember } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { exclusiveAssigner } from '../../infra/log/kafka/exclusive-assigner.ts';

const TOPICS = ['ingest.tokens', 'ingest.posts'];
const EVERYTHING = { 'ingest.tokens': [0, 1, 2, 3], 'ingest.posts': [0, 1] };

/** Only what the assigner reads of the cluster: each topic's partitions. */
const cluster = {
  findTopicPartitionMetadata: (topic: string) => (topic === 'ingest.posts' ? [1, 0] : [3, 0, 2, 1]).map((partitionId) => ({ partitionId })),
} as unknown as Cluster;

interface Member {
  id: string;
  process: string;
  holds?: boolean;
}

/** The members holding partitions once the group with `slot` is assigned, the leader being the first member. */
async function holders(slot: number, members: Member[]): Promise<string[]> {
  const assigners = members.map(({ process, holds = false }) => exclusiveAssigner({ holds: () => holds, slot, process })({ cluster, groupId: 'g', logger: undefined as never }));
  const groupMembers: GroupMember[] = members.map(({ id }, i) => ({ memberId: id, memberMetadata: assigners[i].protocol({ topics: TOPICS }).metadata }));
  const result = await assigners[0].assign({ members: groupMembers, topics: TOPICS });
  const assignments = result.map(({ memberId, memberAssignment }) => ({ memberId, assignment: AssignerProtocol.MemberAssignment.decode(memberAssignment)!.assignment }));
  const holding = assignments.filter((a) => Object.keys(a.assignment).length > 0);
  for (const { assignment } of holding) expect(assignment).toEqual(EVERYTHING);
  return holding.map((a) => a.memberId);
}

describe('the exclusive assigner', () => {
  it('gives every partition to one member, the others none', async () => {
    expect(await holders(0, [{ id: 'm-1', process: 'host-a/1' }])).toEqual(['m-1']);
    expect(await holders(0, [{ id: 'm-2', process: 'host-b/7' }, { id: 'm-1', process: 'host-a/9' }])).toHaveLength(1);
  });

  it('spreads groups of different slots over the processes, each group by its own leader', async () => {
    // Each group's members join in their own order and with ids of their own; the processes are what they share.
    const engine = await holders(0, [{ id: 'e-9', process: 'host-b/12' }, { id: 'e-1', process: 'host-a/40' }]);
    const analogs = await holders(1, [{ id: 'a-1', process: 'host-a/40' }, { id: 'a-2', process: 'host-b/12' }]);
    const events = await holders(2, [{ id: 'p-5', process: 'host-a/40' }, { id: 'p-3', process: 'host-b/12' }]);
    expect({ engine, analogs, events }).toEqual({ engine: ['e-1'], analogs: ['a-2'], events: ['p-5'] });
  });

  it('moves a group to a process that joins when its slot falls there, and keeps the others', async () => {
    const before = [{ id: 'm-a', process: 'host-a/40', holds: true }];
    expect(await holders(1, before)).toEqual(['m-a']);
    expect(await holders(1, [...before, { id: 'm-b', process: 'host-b/12' }])).toEqual(['m-b']);
    expect(await holders(0, [...before, { id: 'm-b', process: 'host-b/12' }])).toEqual(['m-a']);
  });

  it('gives the groups of a process that left to those that remain', async () => {
    expect(await holders(1, [{ id: 'm-a', process: 'host-a/40' }])).toEqual(['m-a']);
    expect(await holders(5, [{ id: 'm-c', process: 'host-c/3' }, { id: 'm-a', process: 'host-a/40' }])).toEqual(['m-c']);
  });

  it('keeps the holder among members of one process, else takes the first by id', async () => {
    const process = 'host-a/40';
    expect(await holders(0, [{ id: 'm-1', process }, { id: 'm-2', process, holds: true }])).toEqual(['m-2']);
    expect(await holders(0, [{ id: 'm-2', process }, { id: 'm-1', process }])).toEqual(['m-1']);
  });

  it('names no process for a member whose user data is not its own (an earlier version), and still assigns', async () => {
    const assigner = exclusiveAssigner({ holds: () => false, slot: 0 })({ cluster, groupId: 'g', logger: undefined as never });
    const earlier = AssignerProtocol.MemberMetadata.encode({ version: 1, topics: TOPICS, userData: Buffer.from('holder') });
    const result = await assigner.assign({ members: [{ memberId: 'old', memberMetadata: earlier }], topics: TOPICS });
    expect(AssignerProtocol.MemberAssignment.decode(result[0].memberAssignment)!.assignment).toEqual(EVERYTHING);
  });
});
