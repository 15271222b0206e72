import { jsonText } from '../infra/store/json-text.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** Hourly narrative buckets, one row per narrative and hour. */
export const narrativesProjection = defineProjection({
  name: 'narratives',
  topics: [TOPICS.narratives.name],
  tables: ['narrative_buckets'],
  toRows: (bucket) => [
    {
      table: 'narrative_buckets',
      row: {
        ...snakeKeys(bucket),
        author_ids: jsonText(bucket.authorIds),
        top_tokens: jsonText(bucket.topTokens),
        top_contributors: jsonText(bucket.topContributors),
      },
    },
  ],
});
