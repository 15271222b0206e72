import { jsonText } from '../infra/store/json-text.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** The latest membership version of each cohort, and every version; a deletion is a version too. */
export const cohortsProjection = defineProjection({
  name: 'cohorts',
  topics: [TOPICS.cohorts.name],
  tables: ['cohorts', 'cohort_versions'],
  toRows: (cohort) => {
    const row = { ...snakeKeys(cohort), members: jsonText(cohort.members) };
    return [
      { table: 'cohorts', row },
      { table: 'cohort_versions', row },
    ];
  },
});
