import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** Forward outcomes, one row per outcome id; a later resolution replaces an earlier one. */
export const outcomesProjection = defineProjection({
  name: 'outcomes',
  topics: [TOPICS.outcomes.name],
  tables: ['outcomes'],
  toRows: (outcome) => [{ table: 'outcomes', row: snakeKeys(outcome) }],
});
