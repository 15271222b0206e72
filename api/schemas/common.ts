import { z } from 'zod';
import { parseIsoTime, unixToMs } from '../../infra/feeds/time.ts';
import { DATASET, DISCLAIMER } from '../../presenters/resource.ts';
import { ERROR_STATUS } from '../errors.ts';

export { DATASET, DISCLAIMER, header, iso } from '../../presenters/resource.ts';

/**
 * The conventions every response follows (spec §1, §2.1, §7), in one place: the resource
 * header (object, dataset, livemode), the list envelope, the research disclaimer, times and
 * the error body. Schemas given an id with `named` become components of /openapi.json.
 */

/**
 * zod's global registry: `.describe()` text lives there too, so converting with it keeps
 * every description, and schemas with an id become components.
 */
export const apiSchemas = z.globalRegistry;

export function named<S extends z.ZodType>(id: string, schema: S, description?: string): S {
  return schema.meta(description === undefined ? { id } : { id, description }) as S;
}


/** The fields every object starts with, for a resource of type `object`. */
export function resourceHeader<const O extends string>(object: O) {
  return { object: z.literal(object), dataset: z.literal(DATASET), livemode: z.literal(true) };
}

export const disclaimer = z.literal(DISCLAIMER).describe('Research responses carry this text (spec §1 rule 4).');

export const isoTime = z.iso.datetime({ offset: false }).describe('ISO-8601 UTC timestamp');

/**
 * ISO-8601 with an offset, or unix time: digits alone are seconds below 10^11 and
 * milliseconds from there on (10^11 s is the year 5138), as the file import reads times.
 */
export const timeParam = z.string().transform((text, ctx): number => {
  const trimmed = text.trim();
  const ms = /^\d+(\.\d+)?$/.test(trimmed) ? unixToMs(Number(trimmed)) : parseIsoTime(trimmed);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: 'expected ISO-8601 with an offset (2026-01-31T12:00:00Z) or unix time in seconds' });
    return z.NEVER;
  }
  return ms;
});

/** The `as_of` parameter of every projection read (api/services/point-in-time.ts checks its range). */
export const asOfParam = timeParam
  .optional()
  .describe(
    'Answer as the service knew it at this time: ISO-8601 with an offset (`2026-01-31T12:00:00Z`) or unix time in seconds (a number ' +
      'from 10^11 on is milliseconds). It must lie between the first snapshot of the history and now (on the Free plan, now minus ' +
      'its scanner delay, for the scanner); outside, 400 VALIDATION names the available range. Without it, the latest data.',
  );

/** The `as_of` member of every projection read's answer. */
export const asOfField = isoTime
  .nullable()
  .describe(
    'The time this answer is for: the `as_of` asked, or without it the time of the newest data read; null only before any data. ' +
      'Asking again later with this `as_of` gives the same answer.',
  );

/** The list envelope (spec 2.1). `total` is present only where it is cheap to count; `as_of` on projection reads. */
export function listOf<S extends z.ZodType>(id: string, item: S, options: { total?: boolean; asOf?: boolean } = {}) {
  return named(
    id,
    z.strictObject({
      ...resourceHeader('list'),
      data: z.array(item),
      hasMore: z.boolean(),
      nextCursor: z.string().nullable().describe('Pass back as `cursor` for the next page; null on the last page.'),
      ...(options.total ? { total: z.number().int().min(0) } : {}),
      ...(options.asOf ? { asOf: asOfField } : {}),
    }),
  );
}

export const ValidationIssueSchema = named(
  'ValidationIssue',
  z.strictObject({
    path: z.string().describe('Where: `path.token`, `query.limit`, `body.rules[2].op`, or `body` for the whole body.'),
    code: z
      .string()
      .describe(
        'What kind of problem: invalid_type, invalid_value, too_small, too_big, invalid_format, unrecognized_key, duplicate_parameter, invalid_json, invalid_content_type, invalid_cursor, custom.',
      ),
    message: z.string(),
    expected: z.string().optional().describe('For invalid_type the expected type; for invalid_value the allowed values, `|`-separated.'),
    minimum: z.number().optional().describe('For too_small: the bound.'),
    maximum: z.number().optional().describe('For too_big: the bound.'),
    inclusive: z.boolean().optional().describe('For too_small and too_big: whether the bound itself is allowed.'),
  }),
);

export const ErrorCodeSchema = z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]]);

export const ErrorSchema = named(
  'Error',
  z.strictObject({
    error: z.strictObject({
      code: ErrorCodeSchema.describe('Switch on this, never on the message.'),
      message: z.string(),
      requestId: z.string().regex(/^req_[0-9a-f]+$/),
      details: z.strictObject({ issues: z.array(ValidationIssueSchema).min(1) }).optional().describe('VALIDATION only.'),
    }),
  }),
);
