import { jsonText } from '../infra/store/json-text.ts';
import { TOPICS } from '../schemas/catalogue.ts';
import { defineProjection } from './runtime/projection.ts';
import { snakeKeys } from '../infra/store/snake-keys.ts';

/** Every version of every author's metrics, so reads can answer "as of t". */
export const authorMetricsProjection = defineProjection({
  name: 'author-metrics',
  topics: [TOPICS.authorMetrics.name],
  tables: ['author_metrics'],
  toRows: (metrics) => [
    { table: 'author_metrics', row: { ...snakeKeys(metrics), sector_strength: jsonText(metrics.sectorStrength) } },
  ],
});
