import { DISCLAIMER, header } from '../../presenters/resource.ts';
import { eventStudyResults } from '../../projections/read-models/research.ts';
import type { EventStudyRow } from '../../projections/tables/research.ts';
import { EVENT_STUDIES, eventStudy, type EventStudy } from '../../research/event-studies/studies.ts';
import { ApiError } from '../errors.ts';
import { defineRoute } from '../http/route.ts';
import { EventStudyListSchema, EventStudyParamsSchema, EventStudySchema } from '../schemas/research.ts';
import type { RouteDeps } from './deps.ts';
import type { RouteGroup } from './group.ts';

/** The stored result of a study (the engine's snake_case JSON), or what is known before its first refresh. */
function present(study: EventStudy, row: EventStudyRow | undefined): Record<string, unknown> {
  const stored = row === undefined ? null : (JSON.parse(row.result) as Record<string, unknown>);
  return {
    ...header('event_study'),
    slug: study.slug,
    title: study.title,
    description: study.description,
    signal_type: study.rule.type,
    rule_version: study.rule.ruleVersion,
    as_of: null,
    events: 0,
    horizons: [],
    ...stored,
    disclaimer: DISCLAIMER,
  };
}

/** Event studies (spec 2.9, 4.4): the research role refreshes them each hour of event time; these read the latest. */
export function eventStudyRoutes({ store }: RouteDeps): RouteGroup {
  async function rows(): Promise<Map<string, EventStudyRow>> {
    return new Map((await eventStudyResults(store)).map((r) => [r.slug, r]));
  }

  const list = defineRoute({
    method: 'GET',
    path: '/v1/quant/event-studies',
    operationId: 'listEventStudies',
    tag: 'Research',
    summary: 'Event studies',
    description: 'The six event studies, each with the as-of time of its last hourly refresh and its number of events.',
    response: { schema: EventStudyListSchema, description: 'Every event study.' },
    handler: async () => {
      const stored = await rows();
      const data = EVENT_STUDIES.map((s) => {
        const p = present(s, stored.get(s.slug));
        return {
          ...header('event_study'),
          slug: s.slug,
          title: s.title,
          description: s.description,
          signal_type: p.signal_type as string,
          rule_version: p.rule_version as string,
          as_of: p.as_of as string | null,
          events: p.events as number,
          disclaimer: DISCLAIMER as typeof DISCLAIMER,
        };
      });
      return { ...header('list'), data, hasMore: false, nextCursor: null, total: data.length };
    },
  });

  const one = defineRoute({
    method: 'GET',
    path: '/v1/quant/event-studies/:slug',
    operationId: 'getEventStudy',
    tag: 'Research',
    summary: 'One event study',
    description:
      'Per horizon, the distribution of forward returns after the events beside the baseline and the abnormal return, as of the last ' +
      'hourly refresh (`as_of`). Refreshed each time event time passes an hour boundary, over point-in-time history.',
    params: EventStudyParamsSchema,
    errors: ['NOT_FOUND'],
    response: { schema: EventStudySchema, description: 'The study.' },
    handler: async ({ params }) => {
      const study = eventStudy(params.slug);
      if (study === undefined) throw new ApiError('NOT_FOUND', `no event study ${params.slug}`);
      return present(study, (await rows()).get(study.slug)) as never;
    },
  });

  return { routes: [list, one] };
}
