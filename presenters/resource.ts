/**
 * The values every presented object starts with (spec §1): its type, dataset and livemode,
 * times as ISO-8601 and the research disclaimer. Shared by the REST API and the public
 * events, so both serialise an object the same way.
 */

/** Every key sees the live dataset only (spec §1 rule 1). */
export const DATASET = 'live';

/** The header of a resource of type `object`. */
export function header<const O extends string>(object: O): { object: O; dataset: typeof DATASET; livemode: true } {
  return { object, dataset: DATASET, livemode: true };
}

export const DISCLAIMER =
  'Analytics and statistical context from point-in-time data, not financial advice and not a guaranteed prediction.';

export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
