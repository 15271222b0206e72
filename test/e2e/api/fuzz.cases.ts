import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, type ErrorCode } from '../../../api/errors.ts';
import { SCOPE_NAMES } from '../../../api/scopes.ts';
import type { ApiResponse, ApiWorld } from '../../helpers/api-world.ts';
import { fuzzRuns, hostileJson, hostileText, objectOf, timeText, valueOf } from '../../helpers/fuzz.ts';

/**
 * Fuzzed requests to every operation of the served /openapi.json: path parameters, query
 * parameters and bodies, both near what the schema allows and hostile (wrong types, edge
 * numbers, unicode, long text, bad percent-encoding, repeated and unknown parameters,
 * malformed JSON, other content types). Every answer is below 500, matches the document
 * (the world's client checks that) and, when an error, is the spec's error body.
 */

interface Operation {
  method: string;
  template: string;
  parameters: { name: string; in: string; schema: Record<string, any> }[];
  body?: Record<string, any>;
}

interface FuzzRequest {
  path: string;
  rawBody?: string;
  contentType?: string;
}

const RUNS_PER_OPERATION = 25;

/** Every byte percent-encoded: any text, lone surrogates included (as U+FFFD), makes a valid URL. */
const encode = (text: string) => [...Buffer.from(text)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** What the requests are made from: the document (for $refs), real values of the world per parameter name, and the world's time. */
interface Sources {
  openapi: Record<string, any>;
  examples: Record<string, string[]>;
  aroundMs: number;
}

/** A parameter's value as text: a real one of the world, one its schema allows, or (when hostile) a hostile one or text not percent-encoded right. */
function paramText(name: string, schema: Record<string, any>, sources: Sources, hostile: boolean): fc.Arbitrary<string> {
  const asText = (v: unknown) => encode(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  const fitting = [
    valueOf(schema, sources.openapi, hostile).map(asText),
    ...(sources.examples[name]?.length ? [fc.constantFrom(...sources.examples[name]).map(encode)] : []),
    ...(/as_of|after|from|to/.test(name) ? [timeText(sources.aroundMs).map(encode)] : []),
  ];
  if (!hostile) return fc.oneof(...fitting);
  return fc.oneof(
    { weight: 4, arbitrary: fc.oneof(...fitting) },
    { weight: 2, arbitrary: hostileText.map(encode) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%FF', '%C0%AF', '%00', '%25%', '+', '&', '=') },
  );
}

/** A request to the operation: every part fitting its schema, or (half the time) with hostile parts. */
function requestOf(op: Operation, sources: Sources): fc.Arbitrary<FuzzRequest> {
  return fc.boolean().chain((hostile) => {
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const queryParams = op.parameters.filter((p) => p.in === 'query');
    const path = fc.tuple(...pathParams.map((p) => paramText(p.name, p.schema, sources, hostile))).map((values) =>
      // A segment `.` or `..` would be resolved away by the client before it is sent.
      pathParams.reduce((template, p, i) => template.replace(`{${p.name}}`, /^(%2e){0,2}$/.test(values[i]) ? `x${values[i]}` : values[i]), op.template),
    );
    const known = queryParams.map((p) => fc.option(paramText(p.name, p.schema, sources, hostile).map((v) => `${p.name}=${v}`), { nil: undefined, freq: 2 }));
    const extra = hostile
      ? fc.array(
          fc.oneof(
            // A repeated known parameter, an unknown one, and pieces without a value or a name.
            ...queryParams.map((p) => paramText(p.name, p.schema, sources, true).map((v) => `${p.name}=${v}`)),
            fc.tuple(hostileText, hostileText).map(([k, v]) => `${encode(k)}=${encode(v)}`),
            fc.constantFrom('as_of', 'cursor', '=1', '&&', 'as_of=', 'cursor=%00'),
          ),
          { maxLength: 2 },
        )
      : fc.constant([]);
    const query = fc.tuple(fc.tuple(...known), extra).map(([k, e]) => [...k.filter((q): q is string => q !== undefined), ...e].join('&'));
    const schemaBody = (h: boolean) => objectOf(op.body!, sources.openapi, h).map((b) => ({ rawBody: JSON.stringify(b) }));
    const body: fc.Arbitrary<Omit<FuzzRequest, 'path'>> = !op.body
      ? fc.constant({})
      : !hostile
        ? schemaBody(false)
        : fc.oneof(
            { weight: 4, arbitrary: schemaBody(true) },
            { weight: 2, arbitrary: hostileJson.map((b) => ({ rawBody: JSON.stringify(b) ?? 'null' })) },
            { weight: 1, arbitrary: hostileText.map((rawBody) => ({ rawBody })) },
            {
              weight: 1,
              arbitrary: fc
                .tuple(schemaBody(false), fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'multipart/form-data', 'application/jsonx', ''))
                .map(([b, contentType]) => ({ ...b, contentType })),
            },
            { weight: 1, arbitrary: fc.constant({}) },
          );
    return fc.tuple(path, query, body).map(([p, q, b]) => ({ path: q ? `${p}?${q}` : p, ...b }));
    // Within Node's 16 KiB for the request line and headers: the answer over it has its own test (test/unit/api-errors.test.ts).
  }).filter((req) => req.path.length < 12_000);
}

function operationsOf(openapi: Record<string, any>): Operation[] {
  return Object.entries(openapi.paths as Record<string, Record<string, any>>).flatMap(([template, ops]) =>
    Object.entries(ops).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      parameters: op.parameters ?? [],
      body: op.requestBody?.content?.['application/json']?.schema,
    })),
  );
}

/** Real values of the world for the parameters named so, so that fuzzed requests also reach data. */
async function examplesOf(world: ApiWorld, key: string): Promise<Record<string, string[]>> {
  const tokens = (await world.request('GET', '/v1/quant/tokens?limit=3', { key })).body.data.map((row: any) => row.token);
  const signals = (await world.request('GET', '/v1/quant/signals?limit=3', { key })).body.data;
  const narratives = (await world.request('GET', '/v1/quant/narratives', { key })).body.data;
  const cursor = (await world.request('GET', '/v1/quant/tokens?limit=1', { key })).body.next_cursor;
  return {
    token: tokens.flatMap((t: any) => [t.id, t.symbol, `$${t.symbol}`, `${t.chain}:${t.address}`, t.address]),
    id: signals.map((s: any) => s.id),
    slug: narratives.map((n: any) => n.slug ?? n.id).filter(Boolean),
    narrative: narratives.map((n: any) => n.slug ?? n.id).filter(Boolean),
    cursor: [cursor],
  };
}

/** The spec's error body (section 7): a known code with its status, a message, and the request's id. */
function expectSpecError(res: ApiResponse): void {
  const code = res.body?.error?.code as ErrorCode;
  expect(ERROR_STATUS[code], `a known error code: ${JSON.stringify(res.body)}`).toBe(res.status);
  expect(res.body.error.message).toMatch(/\S/);
  expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
  if (code === 'VALIDATION') {
    expect(res.body.error.details.issues.length).toBeGreaterThan(0);
    for (const issue of res.body.error.details.issues) expect(issue.message, JSON.stringify(issue)).toMatch(/\S/);
  }
}

export function fuzzCases(world: () => ApiWorld): void {
  describe('fuzzed requests', () => {
    it('answers every fuzzed request to every operation below 500, with the spec error body, and keeps answering', async () => {
      // A key of its own with every scope, so the fuzz reaches validation and spends no other case's rate limit.
      const { key } = await world().createKey('team', SCOPE_NAMES, 'fuzz key');
      const operations = operationsOf(world().openapi);
      expect(operations.length).toBeGreaterThan(20);
      const sources: Sources = { openapi: world().openapi, examples: await examplesOf(world(), key), aroundMs: world().endMs };
      for (const op of operations) {
        await fc.assert(
          fc.asyncProperty(requestOf(op, sources), async (req) => {
            const res = await world().request(op.method, req.path, { key, rawBody: req.rawBody, contentType: req.contentType });
            expect(res.status, `${op.method} ${req.path}`).toBeLessThan(500);
            if (res.status >= 400) expectSpecError(res);
          }),
          fuzzRuns(RUNS_PER_OPERATION),
        );
      }
      expect((await world().request('GET', '/v1/key', { key })).status).toBe(200);
    });
  });
}
