/**
 * The wire form of every response body (spec §1 rule 2): keys renamed from the camelCase
 * of the code to snake_case, values untouched, so nothing is recomputed or rounded.
 *
 * Maps whose keys are data rather than field names (the feature vector, model versions,
 * scores by name) already use snake_case names, which wireName leaves as they are; no
 * response uses ids as object keys, so renaming every key is safe. The OpenAPI document
 * applies the same wireName to its schemas' property names (wireJsonSchema), so the
 * published shapes are the shapes sent. The renaming itself (presenters/wire.ts) is shared
 * with the public events, whose `data` is the same wire form.
 */
import { toWire, wireName } from '../../presenters/wire.ts';

export { toWire, wireName };

/**
 * A response body already rendered in its wire form, which the router sends as it is. For
 * bodies that are mostly the same from one request to the next: render the shared part once
 * (renderWire) and add the per-request members to it (withMembers). A body joined from many
 * rendered parts (a listing's rows) is bytes: a Buffer lives outside the JavaScript heap, so
 * listings of tens of kilobytes a request do not keep the collector busy.
 */
export class WireJson {
  /**
   * @param etag a weak entity tag of the body, for routes declared `conditional`: the router
   *   sends it and answers 304 to an If-None-Match that names it.
   */
  constructor(
    readonly body: string | Buffer,
    readonly etag?: string,
  ) {}

  get text(): string {
    return typeof this.body === 'string' ? this.body : this.body.toString('utf8');
  }
}

export function renderWire(value: object): string {
  return JSON.stringify(toWire(value));
}

/**
 * `rendered` (a JSON object's text) with `members` added last, in wire form; a WireJson member
 * goes in as it is, and makes the result bytes if it is bytes.
 */
export function withMembers(rendered: string, members: Record<string, unknown>, etag?: string): WireJson {
  const bytes: Buffer[] = [];
  let text = rendered.slice(0, -1);
  let first = text.length === 1;
  for (const [key, value] of Object.entries(members)) {
    text += `${first ? '' : ','}${JSON.stringify(wireName(key))}:`;
    first = false;
    if (value instanceof WireJson && typeof value.body !== 'string') {
      bytes.push(Buffer.from(text), value.body);
      text = '';
    } else {
      text += value instanceof WireJson ? value.body : JSON.stringify(toWire(value));
    }
  }
  text += '}';
  return new WireJson(bytes.length === 0 ? text : Buffer.concat([...bytes, Buffer.from(text)]), etag);
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
