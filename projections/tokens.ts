import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** Token metadata: one row per token, the latest by event time. */
export const tokensProjection = defineProjection({
  name: 'tokens',
  topics: [TOPICS.tokens.name],
  tables: ['tokens'],
  toRows: (meta) => [{ table: 'tokens', row: snakeKeys(meta) }],
});
