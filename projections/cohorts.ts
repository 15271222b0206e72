import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection, snakeKeys } from './runtime/projection.ts';

/** The latest membership version of each cohort; a deletion is a version too. */
export const cohortsProjection = defineProjection({
  name: 'cohorts',
  topics: [TOPICS.cohorts.name],
  tables: ['cohorts'],
  toRows: (cohort) => [{ table: 'cohorts', row: { ...snakeKeys(cohort), members: JSON.stringify(cohort.members) } }],
});
