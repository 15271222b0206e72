import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';
import { letFollowersSyncFirst } from './leader-syncs-last.ts';

const NAME = 'TqaCopartitionedAssigner';
const VERSION = 1;

/**
 * A partition assigner that hands out partition numbers, not topic-partitions: the member
 * given number p gets partition p of every topic it reads. A processor with a task per
 * partition joins its inputs by partition (they are co-partitioned by token id), so a task
 * must hold all its inputs or none; kafkajs's round robin over topic-partitions splits a task
 * between members whenever the member count does not divide the partition count (three
 * members, or two and a crashed one not yet expired), and each half then waits for input
 * the other holds. Kafka Streams assigns its tasks alike.
 *
 * Numbers are spread evenly over the members sorted by id; a member keeps what it held
 * (`held`, sent in its metadata) up to its share, so a member joining or leaving moves as few
 * tasks as it can.
 */
export function copartitionedAssigner(held: () => number[]): PartitionAssigner {
  return ({ cluster }) => ({
    name: NAME,
    version: VERSION,
    async assign({ members, topics }) {
      await letFollowersSyncFirst(members.length);
      const partitionsOf = new Map(topics.map((topic) => [topic, cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId)]));
      const numbers = [...new Set([...partitionsOf.values()].flat())].sort((a, b) => a - b);
      const subscribers = members
        .map(({ memberId, memberMetadata }) => {
          const metadata = AssignerProtocol.MemberMetadata.decode(memberMetadata);
          return { memberId, topics: metadata?.topics ?? topics, held: decodeHeld(metadata?.userData) };
        })
        .sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
      const owners = spread(numbers, subscribers.map((s) => s.held));
      return subscribers.map(({ memberId, topics: subscribed }, index) => {
        const assignment: Record<string, number[]> = {};
        for (const topic of subscribed) {
          const partitions = (partitionsOf.get(topic) ?? []).filter((p) => owners.get(p) === index).sort((a, b) => a - b);
          if (partitions.length > 0) assignment[topic] = partitions;
        }
        return { memberId, memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: VERSION, assignment, userData: Buffer.alloc(0) }) };
      });
    },
    protocol({ topics }) {
      return { name: NAME, metadata: AssignerProtocol.MemberMetadata.encode({ version: VERSION, topics, userData: encodeHeld(held()) }) };
    },
  });
}

/**
 * Which member (by index) gets each partition number: member i gets ⌊n/m⌋ numbers, one more
 * for the first n mod m. Each first keeps what it held (a number two members claim goes to
 * the first), then the rest fill the shares in number order.
 */
export function spread(numbers: readonly number[], held: readonly (readonly number[])[]): Map<number, number> {
  const owners = new Map<number, number>();
  const members = held.length;
  if (members === 0) return owners;
  const share = (i: number): number => Math.floor(numbers.length / members) + (i < numbers.length % members ? 1 : 0);
  const counts = held.map(() => 0);
  const available = new Set(numbers);
  held.forEach((numbersHeld, i) => {
    for (const n of [...numbersHeld].sort((a, b) => a - b)) {
      if (counts[i] >= share(i) || !available.has(n) || owners.has(n)) continue;
      owners.set(n, i);
      counts[i]++;
    }
  });
  let member = 0;
  for (const n of numbers) {
    if (owners.has(n)) continue;
    while (counts[member] >= share(member)) member++;
    owners.set(n, member);
    counts[member]++;
  }
  return owners;
}

function encodeHeld(numbers: number[]): Buffer {
  return Buffer.from(JSON.stringify([...new Set(numbers)]));
}

function decodeHeld(userData: Buffer | undefined): number[] {
  try {
    const parsed: unknown = JSON.parse(userData?.toString() || '[]');
    return Array.isArray(parsed) ? parsed.filter((n): n is number => Number.isInteger(n)) : [];
  } catch {
    return []; // a member of another version: it keeps nothing
  }
}
