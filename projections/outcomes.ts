import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection, snakeKeys } from './runtime/projection.ts';

/** Forward outcomes, one row per outcome id; a later resolution replaces an earlier one. */
export const outcomesProjection = defineProjection({
  name: 'outcomes',
  topics: [TOPICS.outcomes.name],
  tables: ['outcomes'],
  toRows: (outcome) => [{ table: 'outcomes', row: snakeKeys(outcome) }],
});
