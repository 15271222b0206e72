import type { z } from 'zod';
import { ApiError, type ValidationIssue } from '../errors.ts';

/**
 * Request validation against a route's zod schemas. Every problem of the path, the query
 * and the body is reported at once in `details.issues`, one issue per problem, each with:
 *   path      where: `query.limit`, `body.rules[2].op`, `path.token`
 *   code      what kind: a zod issue code (invalid_type, too_small, too_big, invalid_value,
 *             invalid_format, unrecognized_key, custom) or duplicate_parameter
 *   message   for a human
 *   expected  for invalid_type and invalid_value: the expected type or the allowed values
 *   minimum / maximum  for too_small / too_big: the bound, with `inclusive`
 */

export type Location = 'path' | 'query' | 'body';

function pathString(location: Location, path: readonly PropertyKey[]): string {
  let out: string = location;
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
  return out;
}

export function issuesOf(location: Location, error: z.ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue): ValidationIssue[] => {
    const at = (extra: readonly PropertyKey[] = []) => pathString(location, [...issue.path, ...extra]);
    switch (issue.code) {
      case 'unrecognized_keys':
        return issue.keys.map((key) => ({
          path: at([key]),
          code: 'unrecognized_key',
          message: `unknown ${location === 'query' ? 'parameter' : 'field'} ${JSON.stringify(key)}`,
        }));
      case 'invalid_type':
        return [{ path: at(), code: issue.code, message: issue.message, expected: issue.expected }];
      case 'invalid_value':
        return [{ path: at(), code: issue.code, message: issue.message, expected: issue.values.map(String).join(' | ') }];
      case 'too_small':
        return [{ path: at(), code: issue.code, message: issue.message, minimum: Number(issue.minimum), inclusive: issue.inclusive ?? true }];
      case 'too_big':
        return [{ path: at(), code: issue.code, message: issue.message, maximum: Number(issue.maximum), inclusive: issue.inclusive ?? true }];
      default:
        return [{ path: at(), code: issue.code, message: issue.message }];
    }
  });
}

/** Koa's parsed query with repeated parameters refused: every parameter here is single-valued. */
export function singleValuedQuery(query: Record<string, string | string[] | undefined>): {
  values: Record<string, string>;
  issues: ValidationIssue[];
} {
  const values: Record<string, string> = {};
  const issues: ValidationIssue[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) {
      issues.push({ path: `query.${name}`, code: 'duplicate_parameter', message: `${name} is given more than once` });
    } else if (value !== undefined) {
      values[name] = value;
    }
  }
  return { values, issues };
}

export function validationError(issues: ValidationIssue[]): ApiError {
  const first = issues[0];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ApiError('VALIDATION', `${first.path}: ${first.message}${more}`, { issues });
}
