import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { partitionForKey } from '../../infra/log/partitioner.ts';

// kafkajs's own murmur2 (what its default partitioner and Java clients use) is the reference.
const kafkaMurmur2 = createRequire(import.meta.url)('kafkajs/src/producer/partitioners/default/murmur2.js') as (
  key: string,
) => number;

describe('partitionForKey', () => {
  it("places keys exactly as Kafka's default partitioner does", () => {
    const keys = ['', 'a', 'ab', 'abc', 'abcd', 'abcde', 'tk_123', 'tk_héllo', '🚀 moon', ...Array.from({ length: 200 }, (_, i) => `tk_${i * 7919}`)];
    for (const partitions of [1, 3, 4, 12]) {
      for (const key of keys) {
        expect(partitionForKey(key, partitions), key).toBe((kafkaMurmur2(key) & 0x7fffffff) % partitions);
      }
    }
  });
});
