/**
 * The wire form of every response body (spec §1 rule 2): keys renamed from the camelCase
 * of the code to snake_case, values untouched, so nothing is recomputed or rounded.
 *
 * Maps whose keys are data rather than field names (the feature vector, model versions,
 * scores by name) already use snake_case names, which wireName leaves as they are; no
 * response uses ids as object keys, so renaming every key is safe. The OpenAPI document
 * applies the same wireName to its schemas' property names (wireJsonSchema), so the
 * published shapes are the shapes sent.
 */

const names = new Map<string, string>();

/** `priceChange15m` → `price_change_15m`, `median24h` → `median_24h`; snake_case stays as is. */
export function wireName(key: string): string {
  let name = names.get(key);
  if (name === undefined) {
    name = /^[a-z][A-Za-z0-9]*$/.test(key)
      ? key
          .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
          .replace(/([a-z])(\d)/g, '$1_$2')
          .toLowerCase()
      : key;
    if (names.size < 10_000) names.set(key, name);
  }
  return name;
}

/** A deep copy of `value` with every object key renamed by wireName. */
export function toWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toWire);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== undefined) out[wireName(key)] = toWire(v);
  }
  return out;
}

/**
 * A response body already rendered in its wire form, which the router sends as it is. For
 * bodies that are mostly the same from one request to the next: render the shared part once
 * (renderWire) and add the per-request members to it (withMembers).
 */
export class WireJson {
  constructor(readonly text: string) {}
}

export function renderWire(value: object): string {
  return JSON.stringify(toWire(value));
}

/** `rendered` (a JSON object's text) with `members` added last, in wire form. */
export function withMembers(rendered: string, members: Record<string, unknown>): WireJson {
  let text = rendered.slice(0, -1);
  for (const [key, value] of Object.entries(members)) {
    text += `${text.length > 1 ? ',' : ''}${JSON.stringify(wireName(key))}:${JSON.stringify(toWire(value))}`;
  }
  return new WireJson(`${text}}`);
}

type JsonSchema = Record<string, unknown>;

/** The JSON Schema of the wire form of values matching `schema`: property names renamed. */
export function wireJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(wireJsonSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: JsonSchema = {};
  for (const [key, v] of Object.entries(schema as JsonSchema)) {
    if (key === 'properties' && v !== null && typeof v === 'object') {
      out[key] = Object.fromEntries(Object.entries(v as JsonSchema).map(([name, s]) => [wireName(name), wireJsonSchema(s)]));
    } else if (key === 'required' && Array.isArray(v)) {
      out[key] = v.map((name) => (typeof name === 'string' ? wireName(name) : name));
    } else if (key === 'default' || key === 'examples' || key === 'const' || key === 'enum') {
      out[key] = v;
    } else {
      out[key] = wireJsonSchema(v);
    }
  }
  return out;
}
