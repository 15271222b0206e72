import fc from 'fast-check';

/**
 * What the fuzz tests share: a fixed seed and bounded runs (a failure names its seed and
 * path, so it replays), and arbitraries of hostile values for any text input (a query
 * parameter, a path segment, a CLI argument, a JSON field).
 */

/** fast-check's options for every fuzz property: reproducible, and cheap enough for every test run. */
export function fuzzRuns(numRuns: number): fc.Parameters<unknown> {
  return { seed: 5151, numRuns };
}

/** Text that parsers of numbers, times, ids and cursors trip on. */
const TRAPS = [
  '', ' ', '0', '-0', '-1', '1e309', '-1e309', '1e-400', 'NaN', 'Infinity', '-Infinity', '0x10', '1_000', '１２', '9'.repeat(400),
  String(Number.MAX_SAFE_INTEGER + 2), '2026-02-30T00:00:00Z', '2026-13-01', '1970-01-01T00:00:00Z', '9999999999999', '-62167219200',
  'null', 'undefined', 'true', '[]', '{}', '__proto__', 'constructor', 'toString', '%', '%ZZ', '\u0000', '\uD800', '\u202E', '😀'.repeat(40),
  '../../etc/passwd', "' OR 1=1 --", '$', '$$', 'tk_', 'sig_', 'btr_', 'wh_', 'cohort_', 'x'.repeat(5000), 'eyJ9', 'YWJj', '====',
];

/** Any text, weighted towards traps, with some very long and some full of unicode. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRAPS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ minLength: 300, maxLength: 3000 }) },
);

/** Any JSON value, or a hostile one: numbers at the edges, deep or wide structures, traps as strings. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  hostileText,
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 0.1, 2 ** 53, -1),
  fc.array(fc.constant(1), { minLength: 200, maxLength: 1000 }),
  fc.constant(nested(200)),
);

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** A time as the API takes it, ISO-8601 or unix seconds, within a year of `aroundMs`. */
export function timeText(aroundMs: number): fc.Arbitrary<string> {
  const year = 365 * 86_400_000;
  return fc.integer({ min: aroundMs - year, max: aroundMs + year }).chain((ms) =>
    fc.constantFrom(new Date(ms).toISOString(), String(Math.floor(ms / 1000)), new Date(ms).toISOString().slice(0, 19) + '+02:00'),
  );
}

/**
 * Values for a field described by a JSON schema (`refs` resolves its $refs): what it allows,
 * near misses and hostile ones; `hostile: false` keeps to what the schema allows where it can.
 */
export function valueOf(schema: Record<string, any> | undefined, refs: Refs = {}, hostile = true): fc.Arbitrary<unknown> {
  const allowed = allowedBy(resolve(schema ?? {}, refs), refs, hostile);
  if (!allowed) return hostileJson;
  return hostile ? fc.oneof({ weight: 3, arbitrary: allowed }, { weight: 1, arbitrary: hostileJson }) : allowed;
}

/** The document the schemas' `#/...` references point into. */
export type Refs = Record<string, any>;

function resolve(schema: Record<string, any>, refs: Refs): Record<string, any> {
  if (typeof schema.$ref !== 'string') return schema;
  const target = (schema.$ref as string).slice(2).split('/').reduce<any>((at, part) => at?.[part], refs);
  return target ?? {};
}

function allowedBy(schema: Record<string, any>, refs: Refs, hostile: boolean): fc.Arbitrary<unknown> | null {
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (schema.const !== undefined) return fc.constant(schema.const);
  const options = (schema.anyOf ?? schema.oneOf) as Record<string, any>[] | undefined;
  if (options) {
    const arbs = options.map((o) => allowedBy(resolve(o, refs), refs, hostile)).filter((a): a is fc.Arbitrary<unknown> => a !== null);
    return arbs.length ? fc.oneof(...arbs) : null;
  }
  switch (schema.type) {
    case 'integer':
      return fc.integer({ min: (schema.minimum ?? -10) - (hostile ? 1 : 0), max: (schema.maximum ?? 1000) + (hostile ? 1 : 0) });
    case 'number':
      return fc.double({ min: (schema.minimum ?? -1e6) - (hostile ? 1 : 0), max: (schema.maximum ?? 1e6) + (hostile ? 1 : 0), noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'string':
      // Formats such as uri are left to the hostile values: a valid public URL would make the API resolve it.
      if (schema.format === 'date-time') return fc.date({ min: new Date(0), max: new Date(4102444800000), noInvalidDate: true }).map((d) => d.toISOString());
      if (schema.format) return null;
      if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
      return fc.string({ minLength: schema.minLength ?? 0, maxLength: (schema.maxLength ?? 20) + (hostile ? 1 : 0) });
    case 'array':
      return fc.array(valueOf(schema.items, refs, hostile), { minLength: hostile ? 0 : (schema.minItems ?? 0), maxLength: (schema.maxItems ?? 3) + (hostile ? 1 : 0) });
    case 'object':
      return objectOf(schema, refs, hostile);
    default:
      return null;
  }
}

/** An object of the schema's properties, each present or not; `hostile: false` keeps the required ones. */
export function objectOf(schema: Record<string, any>, refs: Refs = {}, hostile = true): fc.Arbitrary<Record<string, unknown>> {
  const resolved = resolve(schema, refs);
  const properties = (resolved.properties ?? {}) as Record<string, Record<string, any>>;
  const fields = Object.fromEntries(Object.entries(properties).map(([name, field]) => [name, valueOf(field, refs, hostile)]));
  return fc.record(fields, { requiredKeys: hostile ? [] : ((resolved.required ?? []) as string[]) });
}
