import { AssignerProtocol, type Cluster, type GroupMember } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { copartitionedAssigner, spread } from '../../infra/log/kafka/copartitioned-assigner.ts';

const TOPICS = ['ingest.tokens', 'quant.outcome-subjects', 'ingest.market'];

/** Only what the assigner reads of the cluster: each topic's partitions. */
function clusterWith(partitions: Record<string, number>): Cluster {
  return {
    findTopicPartitionMetadata: (topic: string) => Array.from({ length: partitions[topic] ?? 0 }, (_, partitionId) => ({ partitionId })),
  } as unknown as Cluster;
}

async function assign(members: { id: string; held: number[] }[], partitions: Record<string, number>) {
  const assigners = members.map(({ held }) => copartitionedAssigner(() => held)({ cluster: clusterWith(partitions), groupId: 'g', logger: undefined as never }));
  const groupMembers: GroupMember[] = members.map(({ id }, i) => ({ memberId: id, memberMetadata: assigners[i].protocol({ topics: TOPICS }).metadata }));
  const result = await assigners[0].assign({ members: groupMembers, topics: TOPICS });
  return Object.fromEntries(result.map(({ memberId, memberAssignment }) => [memberId, AssignerProtocol.MemberAssignment.decode(memberAssignment)!.assignment]));
}

describe('the co-partitioned assigner', () => {
  it('gives each of three members partition p of every topic together, all partitions once', async () => {
    const assignment = await assign(
      [
        { id: 'm-b', held: [] },
        { id: 'm-a', held: [] },
        { id: 'm-c', held: [] },
      ],
      { 'ingest.tokens': 4, 'quant.outcome-subjects': 4, 'ingest.market': 4 },
    );
    expect(assignment).toEqual({
      'm-a': { 'ingest.tokens': [0, 1], 'quant.outcome-subjects': [0, 1], 'ingest.market': [0, 1] },
      'm-b': { 'ingest.tokens': [2], 'quant.outcome-subjects': [2], 'ingest.market': [2] },
      'm-c': { 'ingest.tokens': [3], 'quant.outcome-subjects': [3], 'ingest.market': [3] },
    });
  });

  it('gives a topic with fewer partitions to the members holding those numbers', async () => {
    const assignment = await assign(
      [
        { id: 'm-a', held: [] },
        { id: 'm-b', held: [] },
      ],
      { 'ingest.tokens': 1, 'quant.outcome-subjects': 4, 'ingest.market': 4 },
    );
    expect(assignment['m-a']).toEqual({ 'ingest.tokens': [0], 'quant.outcome-subjects': [0, 1], 'ingest.market': [0, 1] });
    expect(assignment['m-b']).toEqual({ 'quant.outcome-subjects': [2, 3], 'ingest.market': [2, 3] });
  });

  it('lets members keep what they held when one joins, moving only what the newcomer needs', async () => {
    const assignment = await assign(
      [
        { id: 'm-a', held: [1, 3] },
        { id: 'm-b', held: [0, 2] },
        { id: 'm-0', held: [] },
      ],
      { 'ingest.tokens': 4, 'quant.outcome-subjects': 4, 'ingest.market': 4 },
    );
    // m-0 sorts first and has the larger share: it gets one number from each of the others' leftovers.
    const numbers = (id: string) => assignment[id]?.['ingest.market'] ?? [];
    expect([...numbers('m-0'), ...numbers('m-a'), ...numbers('m-b')].sort()).toEqual([0, 1, 2, 3]);
    expect(numbers('m-a')).toEqual([1]);
    expect(numbers('m-b')).toEqual([0]);
    expect(numbers('m-0')).toEqual([2, 3]);
  });
});

describe('spread', () => {
  it('balances n numbers over m members, the first n mod m getting one more', () => {
    const owners = spread([0, 1, 2, 3, 4], [[], [], []]);
    expect([...owners]).toEqual([
      [0, 0],
      [1, 0],
      [2, 1],
      [3, 1],
      [4, 2],
    ]);
  });

  it('gives a number two members claim to the first, and nothing to keep beyond a share', () => {
    const owners = spread([0, 1, 2, 3], [[0, 1, 2], [0, 3]]);
    expect(Object.fromEntries(owners)).toEqual({ 0: 0, 1: 0, 3: 1, 2: 1 });
  });

  it('gives nothing when there are no members', () => {
    expect(spread([0, 1], []).size).toBe(0);
  });
});
