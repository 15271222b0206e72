import { jsonText } from '../infra/store/json-text.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** Convergence events of cohorts, one row per event id. */
export const cohortEventsProjection = defineProjection({
  name: 'cohort-events',
  topics: [TOPICS.cohortEvents.name],
  tables: ['cohort_events'],
  toRows: (event) => [{ table: 'cohort_events', row: { ...snakeKeys(event), members: jsonText(event.members) } }],
});
