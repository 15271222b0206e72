import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection, snakeKeys } from './runtime/projection.ts';

/** Token metadata: one row per token, the latest by event time. */
export const tokensProjection = defineProjection({
  name: 'tokens',
  topics: [TOPICS.tokens.name],
  tables: ['tokens'],
  toRows: (meta) => [{ table: 'tokens', row: snakeKeys(meta) }],
});
