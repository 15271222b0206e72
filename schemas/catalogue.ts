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
  unresolvedRefs: {
    name: 'quant.unresolved-refs',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: 30 * DAY_MS,
    retentionBytes: FOREVER,
    valueType: 'unresolved-ref',
    key: 'post id',
    description: 'Token references in posts that resolve to no known token; counted, never guessed.',
  },
  features: {
    name: 'quant.features',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'feature-snapshot',
    key: 'token id',
    description: 'Point-in-time feature snapshots per token on the 5-minute event-time grid.',
  },
  outcomes: {
    name: 'quant.outcomes',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'outcome',
    key: 'token id',
    description: 'Forward returns and drawdowns of snapshots and calls, emitted once each horizon has passed.',
  },
  calls: {
    name: 'quant.calls',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'author-call',
    key: 'author id',
    description: 'Authors\' calls: first mention of a token, or the first after 7 days of silence on it.',
  },
  authorMetrics: {
    name: 'quant.author-metrics',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'author-metrics',
    key: 'author id',
    description: 'Versions of author metrics as of each event-time hour; the history answers what was known at t.',
  },
  cohortCommands: {
    name: 'control.cohorts',
    partitions: 1,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'cohort-command',
    key: 'cohort id',
    description: 'Commands that create, change, share and delete manual cohorts. Not compacted: a replay needs every command.',
  },
  keys: {
    name: 'control.keys',
    partitions: 1,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'api-key-event',
    key: 'key id',
    description: 'Creation and revocation of API keys (hashes only). Not compacted: a replay needs every event.',
  },
  cohorts: {
    name: 'quant.cohorts',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'cohort-version',
    key: 'cohort id',
    description: 'Membership versions of auto and manual cohorts.',
  },
  cohortEvents: {
    name: 'quant.cohort-events',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'convergence-event',
    key: 'token id',
    description: 'Cohort convergence on a token.',
  },
  narratives: {
    name: 'quant.narratives',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'narrative-bucket',
    key: 'narrative slug',
    description: 'Hourly narrative buckets: theses, authors, attention share, top tokens and contributors.',
  },
  snapshots: {
    name: 'quant.snapshots',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'quant-snapshot',
    key: 'token id',
    description: 'Quant snapshots (scores with drivers, market, activity, features, freshness): the replayable history.',
  },
  snapshotsLatest: {
    name: 'quant.snapshots-latest',
    partitions: PARTITIONS,
    cleanupPolicy: 'compact',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'quant-snapshot',
    key: 'token id',
    description: 'The latest quant snapshot per token; compacted.',
  },
  signals: {
    name: 'quant.signals',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: FOREVER,
    retentionBytes: FOREVER,
    valueType: 'signal',
    key: 'token id',
    description: 'Signals: version 1 when a rule fires, version 2 when it ends; same signal id.',
  },
  publicEvents: {
    name: 'public.events',
    partitions: PARTITIONS,
    cleanupPolicy: 'delete',
    retentionMs: 30 * DAY_MS,
    retentionBytes: FOREVER,
    valueType: 'public-event',
    key: 'token id, or narrative slug',
    description: 'Public events for subscribers (signal.created, signal.ended, token.score.updated, cohort.convergence, narrative.shift), each with its deterministic ev_ id and the REST wire form of its data.',
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
