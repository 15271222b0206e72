import type { TopicSpec } from '../infra/log/port.ts';
import type { RecordTypeName } from './records.ts';

/** A topic of the catalogue: its log settings, what its key is and which record it holds. */
export interface CatalogueTopic extends TopicSpec {
  valueType: RecordTypeName;
  key: string;
  description: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const FOREVER = -1;
/** Partition count shared by every keyed topic so that joins by token id are co-partitioned. */
export const PARTITIONS = 4;

export const TOPICS = {
  posts: {
    name: 'ingest.posts',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'post',
    key: 'post id',
    description: 'Social posts by authors, as produced by feeds.',
  },
  market: {
    name: 'ingest.market',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'market-tick',
    key: 'token id',
    description: 'Market ticks per token.',
  },
  tokens: {
    name: 'ingest.tokens',
    partitions: PARTITIONS,
    cleanupPolicy: 'compact',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'token-meta',
    key: 'token id',
    description: 'Token metadata; compacted to the latest record per token.',
  },
  mentions: {
    name: 'quant.mentions',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'mention',
    key: 'token id',
    description: 'Posts exploded into resolved token mentions.',
  },
  deadLetters: {
    name: 'ops.dead-letters',
    partitions: 1,
    cleanupPolicy: 'delete',
    retentionMs: 30 * DAY_MS,
    retentionBytes: FOREVER,
    valueType: 'dead-letter',
    key: 'source topic or file',
    description: 'Records refused by ingest or a processor, with the reason.',
  },
} as const satisfies Record<string, CatalogueTopic>;

export const CATALOGUE: CatalogueTopic[] = Object.values(TOPICS);

export function catalogueTopic(name: string): CatalogueTopic | undefined {
  return CATALOGUE.find((t) => t.name === name);
}
