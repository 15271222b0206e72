import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from './errors.ts';
import { MAX_BODY_BYTES } from './http/body.ts';
import type { ApiRoute } from './http/route.ts';
import { wireJsonSchema } from './http/wire.ts';
import { PUBLIC_REQUESTS_PER_MINUTE, WINDOW_MS } from './middleware/rate-limit.ts';
import { PLANS } from './plans.ts';
import { apiSchemas } from './schemas/common.ts';
import { SCOPES, scopeOf } from './scopes.ts';

/**
 * The OpenAPI 3.1 document, generated from the routes and the zod schemas they validate
 * and answer with: components from the schema registry (property names as sent, wire.ts),
 * parameters and bodies from each route's input schemas, and every error each route can
 * answer. Built once per process; GET /openapi.json serves it.
 */

type Json = Record<string, unknown>;

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });

/**
 * A zod schema as inline JSON Schema. Named schemas inside it come out as `$defs` entries;
 * every one of them is also a component, so their refs are pointed there and `$defs` dropped.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _, $defs: __, ...rest } = z.toJSONSchema(schema, { io, metadata: apiSchemas, unrepresentable: 'any' }) as Json;
  const text = JSON.stringify(wireJsonSchema(rest)).replaceAll('"#/$defs/', '"#/components/schemas/');
  return JSON.parse(text) as Json;
}

function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(apiSchemas, { io: 'output', uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any' });
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _, $id: __, ...rest } = schema as Json;
      return [id, wireJsonSchema(rest)];
    }),
  );
}

const RESPONSE_HEADERS: Json = {
  'RateLimit-Limit': { description: 'Requests allowed in the window.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: '`<limit>;w=60`', schema: { type: 'string' } },
  'X-RateLimit-Limit': { description: 'As RateLimit-Limit.', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'As RateLimit-Remaining.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Unix time of the reset, in seconds.', schema: { type: 'integer' } },
  'X-Request-Id': { description: 'The request id, `req_<hex>`, as in error bodies.', schema: { type: 'string' } },
  'Server-Timing': { description: '`app;dur=<ms>`: the time the service spent on the request, to tell it from the network\'s.', schema: { type: 'string' } },
};

const headerRefs = (names: readonly string[]) => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
const COMMON_HEADERS = headerRefs(Object.keys(RESPONSE_HEADERS));

const ERROR_TEXT: Record<ErrorCode, string> = {
  VALIDATION: 'A path, query or body parameter is invalid; `details.issues` lists each problem.',
  UNAUTHORIZED: 'Missing, malformed, unknown or revoked key.',
  PLAN_REQUIRED: "The feature needs a higher plan than the key's.",
  FORBIDDEN: 'The key lacks the scope this endpoint needs.',
  NOT_FOUND: "The object does not exist in the key's dataset.",
  METHOD_NOT_ALLOWED: 'Wrong method for the path; `Allow` lists the methods.',
  LIMIT_REACHED: 'A plan quota is used up.',
  CONFLICT: 'The request conflicts with the current state.',
  PAYLOAD_TOO_LARGE: `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
  RATE_LIMITED: 'Rate limit exceeded; wait `Retry-After` seconds.',
  INTERNAL: 'Unexpected error; retry.',
  UPSTREAM_UNAVAILABLE: 'A dependency (the store or the event log) is unavailable; retry.',
};

function errorResponses(): Json {
  return Object.fromEntries(
    (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => {
      const headers: Json = { ...COMMON_HEADERS };
      if (code === 'RATE_LIMITED') headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
      if (code === 'METHOD_NOT_ALLOWED') headers.Allow = { description: 'The methods the path allows.', schema: { type: 'string' } };
      return [code, { description: `${code}: ${ERROR_TEXT[code]}`, headers, content: { 'application/json': { schema: ref('Error') } } }];
    }),
  );
}

/** The errors a route can answer: its own, plus what its guards and inputs imply. */
export function errorsOf(route: ApiRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors ?? []);
  if (!route.public) ['UNAUTHORIZED', 'FORBIDDEN'].forEach((c) => codes.add(c as ErrorCode));
  if (route.planFeature) codes.add('PLAN_REQUIRED');
  // Any route refuses unknown query parameters.
  codes.add('VALIDATION');
  if (route.body) codes.add('PAYLOAD_TOO_LARGE');
  ['RATE_LIMITED', 'INTERNAL', 'UPSTREAM_UNAVAILABLE'].forEach((c) => codes.add(c as ErrorCode));
  return [...codes].sort((a, b) => ERROR_STATUS[a] - ERROR_STATUS[b]);
}

function parameters(route: ApiRoute): Json[] {
  const out: Json[] = [];
  for (const [location, schema] of [
    ['path', route.params],
    ['query', route.query],
  ] as const) {
    if (!schema) continue;
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      const fieldSchema = jsonSchema(field, 'input');
      const { description, ...rest } = fieldSchema;
      out.push({
        name,
        in: location,
        required: location === 'path' || !field.safeParse(undefined).success,
        ...(typeof description === 'string' ? { description } : {}),
        schema: rest,
      });
    }
  }
  return out;
}

const ETAG_HEADER: Json = {
  description: 'A weak entity tag of the answer: send it back in If-None-Match to get 304 while the answer has not changed.',
  schema: { type: 'string' },
};

/** The If-None-Match header parameter of a conditional route. */
const IF_NONE_MATCH: Json = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'ETags of an answer already held: 304 without a body when one of them is current.',
  schema: { type: 'string' },
};

function operation(route: ApiRoute): Json {
  const scope = route.public ? null : scopeOf(route.method, route.path);
  const responseId = apiSchemas.get(route.response.schema)?.id;
  const responseSchema = responseId ? ref(responseId) : jsonSchema(route.response.schema, 'output');
  const responses: Json = {
    [String(route.response.status ?? 200)]: {
      description: route.response.description,
      headers: {
        ...COMMON_HEADERS,
        ...Object.fromEntries(Object.entries(route.response.headers ?? {}).map(([name, description]) => [name, { description, schema: { type: 'string' } }])),
        ...(route.conditional ? { ETag: ETAG_HEADER } : {}),
      },
      content: { 'application/json': { schema: responseSchema } },
    },
  };
  if (route.conditional) {
    responses['304'] = { description: 'Not modified: the If-None-Match header names the current ETag. No body.', headers: { ...COMMON_HEADERS, ETag: ETAG_HEADER } };
  }
  for (const code of errorsOf(route)) {
    const status = String(ERROR_STATUS[code]);
    if (route.statusOf && code === 'UPSTREAM_UNAVAILABLE') {
      // A route whose status depends on its result (health) answers 503 with its own body too.
      responses[status] = {
        description: `The route's own body when its result says unavailable, or ${code}.`,
        headers: COMMON_HEADERS,
        content: { 'application/json': { schema: { oneOf: [responseSchema, ref('Error')] } } },
      };
      continue;
    }
    // LIMIT_REACHED and CONFLICT share 409: a route answering both gets one response naming both.
    responses[status] =
      status in responses
        ? { description: `LIMIT_REACHED or CONFLICT`, content: { 'application/json': { schema: ref('Error') } } }
        : { $ref: `#/components/responses/${code}` };
  }
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security: scope === null ? [] : [{ bearerKey: [scope] }, { headerKey: [scope] }],
    ...(scope === null ? {} : { 'x-required-scope': scope }),
    ...(route.planFeature ? { 'x-plan-feature': route.planFeature } : {}),
    parameters: route.conditional ? [...parameters(route), IF_NONE_MATCH] : parameters(route),
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } }
      : {}),
    responses,
  };
}

const DESCRIPTION = `Read-only quantitative analytics on crypto tokens from social activity and market data.

Conventions: every object has \`object\`, \`dataset\` ("live") and \`livemode\` (true). Lists use the envelope
\`{ object: "list", data, has_more, next_cursor }\`; pass \`next_cursor\` back as \`cursor\` until \`has_more\` is false.
A cursor belongs to the query that produced it; another query refuses it with VALIDATION.
Point in time: every read of the projections takes \`as_of\` (ISO-8601 or unix seconds) and answers as the service
knew it then; every such answer carries \`as_of\`, the time it is for (without the parameter, the time of the data
read), and asking again with it gives the same answer. A cursor carries its first page's \`as_of\`, so every page
of a listing is read as of the same time.
Keys are snake_case; values are as computed, never rounded. \`null\` means not available, never zero; the score
details' \`confidence\` and \`reason\` say why. Research responses carry a \`disclaimer\`.
Times are ISO-8601 UTC. Request bodies are JSON of at most ${MAX_BODY_BYTES} bytes; unknown query parameters and
body fields are refused. A known path with another method answers 405 METHOD_NOT_ALLOWED with an \`Allow\` header.

Authentication: \`Authorization: Bearer <key>\` or \`x-api-key: <key>\`, keys of the form \`svc_live_…\`. Each endpoint
names the scope it needs (\`x-required-scope\`; see \`x-scopes\`). Plans: ${Object.values(PLANS)
  .map((p) => `${p.label} ${p.requestsPerMinute}`)
  .join(', ')} requests per minute per key, in fixed ${WINDOW_MS / 1000} s windows; public endpoints
${PUBLIC_REQUESTS_PER_MINUTE} per minute per IP.`;

export function openApiDocument(routes: readonly ApiRoute[], version: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Token quant analytics API', version, description: DESCRIPTION },
    servers: [{ url: '/' }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: componentSchemas(),
      responses: errorResponses(),
      headers: { ...RESPONSE_HEADERS, 'Retry-After': { description: 'Seconds to wait; only on 429.', schema: { type: 'integer' } } },
      securitySchemes: {
        bearerKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer svc_live_…' },
        headerKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      },
    },
    'x-scopes': SCOPES,
    'x-plans': Object.fromEntries(
      Object.entries(PLANS).map(([name, p]) => [
        name,
        {
          label: p.label,
          requests_per_minute: p.requestsPerMinute,
          backtests: p.features.backtests,
          scanner_delay_minutes: p.features.scannerDelayMinutes,
          webhooks: p.features.webhooks,
        },
      ]),
    ),
  };
}
