import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './openapi-types.ts';

/**
 * A typed client of the REST API: openapi-fetch over the types generated from /openapi.json
 * (openapi-types.ts), so every path, parameter and body is checked by the compiler.
 * Exported as `token-quant-analytics/client`.
 */

export type { components, operations, paths } from './openapi-types.ts';
export type ApiClient = Client<paths>;
export type ErrorBody = components['schemas']['Error'];

export interface ClientOptions {
  /** Where the API answers, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** An API key, sent as a bearer token. */
  key: string;
  /** Another fetch (a test's, or one with a proxy); the global fetch by default. */
  fetch?: typeof globalThis.fetch;
}

export function createClient({ baseUrl, key, fetch }: ClientOptions): ApiClient {
  return createFetchClient<paths>({ baseUrl, fetch, headers: { Authorization: `Bearer ${key}` } });
}

/** An error answer of the API (spec §7): switch on `code`, quote `requestId` when reporting it. */
export class ApiRequestError extends Error {
  readonly code: ErrorBody['error']['code'];
  readonly requestId: string;
  readonly status: number;

  constructor(status: number, body: ErrorBody) {
    super(body.error.message);
    this.name = 'ApiRequestError';
    this.status = status;
    this.code = body.error.code;
    this.requestId = body.error.request_id;
  }
}

/** The data of a client call, or its error thrown as an ApiRequestError. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined) throw new ApiRequestError(result.response.status, result.error as ErrorBody);
  return result.data as T;
}
