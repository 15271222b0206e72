import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** Resolved token mentions, one row per mention id. */
export const mentionsProjection = defineProjection({
  name: 'mentions',
  topics: [TOPICS.mentions.name],
  tables: ['mentions'],
  toRows: (mention) => [{ table: 'mentions', row: snakeKeys(mention) }],
});
