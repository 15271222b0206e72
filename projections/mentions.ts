import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection, snakeKeys } from './runtime/projection.ts';

/** Resolved token mentions, one row per mention id. */
export const mentionsProjection = defineProjection({
  name: 'mentions',
  topics: [TOPICS.mentions.name],
  tables: ['mentions'],
  toRows: (mention) => [{ table: 'mentions', row: snakeKeys(mention) }],
});
